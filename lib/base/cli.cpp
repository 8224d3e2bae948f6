#include "nmt/base/cli.h"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include <iostream>
#include <thread>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nmt/base/error.h"
#include "nmt_version.h"

namespace nmt::cli {
namespace {

// std::cout's buffer, writing to descriptor 1 itself, so that the reason of the first
// failed write (ENOSPC, EBADF, ...) is kept until the tool reports it.
class CheckedStdout : public std::streambuf {
 public:
  CheckedStdout() { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    const char* data = pbase();
    size_t left = static_cast<size_t>(pptr() - pbase());
    while (left > 0 && error_ == 0) {
      const ssize_t n = ::write(STDOUT_FILENO, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) error_ = errno;
      else data += n, left -= static_cast<size_t>(n);
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return error_ == 0 ? 0 : -1;
  }

 private:
  char buffer_[1 << 16];
  int error_ = 0;
};

CheckedStdout& checked_stdout() {
  static CheckedStdout buffer;
  return buffer;
}

}  // namespace

std::string project_version() { return NMT_VERSION; }

void add_common_options(CLI::App& app, CommonOptions& options) {
  app.set_version_flag("--version",
                       "nmt " + project_version() + " (LibTorch " + TORCH_VERSION + ")");
  app.add_option("--threads", options.threads, "CPU threads for LibTorch (0 = all cores)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

int apply_threads(int requested) {
  int threads = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(threads, 1);
  // LibTorch starts with 1 intra-op thread on these machines unless told otherwise.
  at::set_num_threads(threads);
  return threads;
}

int run(CLI::App& app, CommonOptions& options, int argc, char** argv,
        const std::function<int()>& body) {
  const std::string tool = app.get_name().empty() ? "nmt" : app.get_name();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help/version or the usage error
    return code == 0 ? 0 : kExitUsage;
  }
  try {
    std::cout.rdbuf(&checked_stdout());
    apply_threads(options.threads);
    const int code = body();
    check_stdout();
    return code;
  } catch (const Error& e) {
    std::cerr << tool << ": error: " << e.what() << std::endl;
  } catch (const c10::Error& e) {
    std::cerr << tool << ": error: " << e.what_without_backtrace() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << tool << ": error: " << e.what() << std::endl;
  }
  return kExitFailure;
}

void check_stdout() {
  std::cout.flush();
  const bool ours = std::cout.rdbuf() == &checked_stdout();
  const int reason = ours ? checked_stdout().error() : 0;
  if (std::cout.good() && reason == 0 && std::fflush(stdout) == 0 && !std::ferror(stdout)) return;
  throw Error(std::string("cannot write stdout: ") + (reason != 0 ? std::strerror(reason) : "write error"));
}

}  // namespace nmt::cli
