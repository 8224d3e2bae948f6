#include "nmt/base/cli.h"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include <iostream>
#include <thread>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nmt/base/error.h"
#include "nmt_version.h"

namespace nmt::cli {

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
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && std::cout.good() && !std::ferror(stdout)) return;
  const int reason = errno;
  throw Error(std::string("cannot write stdout: ") + (reason != 0 ? std::strerror(reason) : "write error"));
}

}  // namespace nmt::cli
