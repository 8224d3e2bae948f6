#include "nmt/base/cli.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <regex>
#include <thread>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nmt/base/cpu_features.h"
#include "nmt/base/error.h"
#include "nmt/base/library_versions.h"
#include "nmt_version.h"

namespace nmt::cli {
namespace {

// std::cout's buffer, writing to descriptor 1 itself, so that the reason of the first
// failed write (ENOSPC, EBADF, ...) is kept until the tool reports it.
class CheckedStdout : public std::streambuf {
 public:
  CheckedStdout() { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }
  // Whether the failed write was already reported as the tool's error.
  bool reported() const { return reported_; }
  void mark_reported() { reported_ = true; }

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
  bool reported_ = false;
};

CheckedStdout& checked_stdout() {
  static CheckedStdout buffer;
  return buffer;
}

// std::cout writes through the checked buffer while a tool's body runs. Whatever way the
// body ends, what it wrote is flushed and std::cout gets its own buffer back, so output
// written before an error reaches stdout and nothing writes into the static buffer after
// the end of main (the library flushes std::cout at exit, after statics are destroyed).
class CheckedStdoutScope {
 public:
  CheckedStdoutScope() : previous_(std::cout.rdbuf(&checked_stdout())) {}
  ~CheckedStdoutScope() {
    std::cout.flush();
    std::cout.rdbuf(previous_);
  }
  CheckedStdoutScope(const CheckedStdoutScope&) = delete;
  CheckedStdoutScope& operator=(const CheckedStdoutScope&) = delete;

 private:
  std::streambuf* previous_;
};

}  // namespace

std::string project_version() { return NMT_VERSION; }

namespace {

std::string compact(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// `accepts` says whether a parsed number is allowed; `wanted` completes "X is not ...".
CLI::Validator number_check(std::function<bool(double)> accepts, const std::string& wanted,
                            const std::string& description) {
  return CLI::Validator(
      [accepts, wanted](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value)) return input + " is not a number";
        return accepts(value) ? std::string() : input + " is not " + wanted;
      },
      description);
}

}  // namespace

CLI::Validator in_range(double low, double high) {
  return number_check([=](double v) { return v >= low && v <= high; },
                      "from " + compact(low) + " to " + compact(high),
                      "[" + compact(low) + " - " + compact(high) + "]");
}

CLI::Validator at_least(double low) {
  return number_check([=](double v) { return v >= low; }, compact(low) + " or more", ">= " + compact(low));
}

CLI::Validator positive() {
  return number_check([](double v) { return v > 0; }, "above 0", "> 0");
}

void add_common_options(CLI::App& app, CommonOptions& options) {
  app.set_version_flag("--version",
                       "nmt " + project_version() + " (" + library_versions() + ")");
  app.add_option("--threads", options.threads, "CPU threads for LibTorch (0 = all cores; more than the cores uses the cores)")
      ->check(in_range(0, kMaxThreads))
      ->capture_default_str();
}

void add_verbose_option(CLI::App& app, bool& verbose) {
  app.add_flag("--verbose", verbose,
               "Print on stderr what computes the model, as decided when it was loaded: the path of each kind of "
               "layer (fp32/bf16/int8 and the library), the instruction set, oneDNN's version, threads");
}

void add_progress_every(CLI::App& app, double& seconds, const std::string& counts) {
  app.add_option("--progress-every", seconds, "Seconds between progress lines on stderr (" + counts + "); 0: every chance")
      ->check(at_least(0))
      ->capture_default_str();
}

void print_verbose(const CLI::App& app, const std::vector<std::string>& lines) {
  for (const auto& line : lines) print_line(app.get_name() + ": " + line);
}

void print_line(const std::string& text) {
  std::cerr.flush();  // what was written before comes first (std::cerr may have been given a buffer)
  const std::string line = text + '\n';
  size_t written = 0;
  while (written < line.size()) {  // one write, unless the kernel takes only a part (a full pipe)
    const ssize_t n = ::write(STDERR_FILENO, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<size_t>(n);
  }
}

int apply_threads(int requested) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int threads = requested > 0 ? requested : cores;
  if (threads > cores) {
    print_line("note: --threads " + std::to_string(threads) + " is more than the " + std::to_string(cores) +
               " cores here; using " + std::to_string(cores));
    threads = cores;
  }
  // LibTorch starts with 1 intra-op thread on these machines unless told otherwise.
  at::set_num_threads(threads);
  return threads;
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The option a user of another toolkit probably meant by an unknown `--name` ("" if none
// is close): one whose name begins the unknown one or is begun by it (--beam-size ->
// --beam), else the nearest by edit distance, within a third of the name.
std::string probable_option(const CLI::App& app, const std::string& unknown) {
  const std::string name = unknown.substr(0, unknown.find('='));
  if (name.size() < 3 || name.rfind("--", 0) != 0) return "";
  const std::string bare = name.substr(2);
  std::string best;
  size_t best_rank = std::numeric_limits<size_t>::max();
  for (const CLI::Option* option : app.get_options()) {
    for (const auto& known : option->get_lnames()) {
      if (known == bare) return "";  // a known option: not the one that was wrong
      const size_t shorter = std::min(known.size(), bare.size());
      const bool begins = shorter >= 3 && (known.rfind(bare, 0) == 0 || bare.rfind(known, 0) == 0);
      const size_t distance = edit_distance(known, bare);
      const size_t rank = begins ? 0 : (distance <= std::max<size_t>(1, bare.size() / 3) ? distance : best_rank);
      if (rank < best_rank) {
        best_rank = rank;
        best = "--" + known;
      }
    }
  }
  return best_rank == std::numeric_limits<size_t>::max() ? "" : best;
}

// CLI11's usage error as one line naming the tool, with what was probably meant.
std::string usage_error(const CLI::App& app, const std::string& tool, const CLI::ParseError& e, int argc, char** argv) {
  std::string line = e.what();
  for (int i = 1; i < argc; ++i) {
    if (const auto meant = probable_option(app, argv[i]); !meant.empty())
      return line + " (" + std::string(argv[i]).substr(0, std::string(argv[i]).find('=')) + ": did you mean " + meant + "?)";
  }
  // CLI11 words an option given too often "--model: At Most 1 required but received 2".
  static const std::regex too_many(R"((\S+): At Most (\d+) required but received (\d+))");
  std::smatch match;
  if (std::regex_search(line, match, too_many))
    return match[1].str() + " was given " + match[3].str() + " times; " + tool + " takes it " +
           (match[2].str() == "1" ? "once" : "at most " + match[2].str() + " times");
  // A file given as an argument, as other toolkits take it, to a tool that reads stdin.
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && app.get_option_no_throw("--input") != nullptr)
    line += " (the input is read from stdin, or from -i/--input FILE)";
  return line;
}

}  // namespace

int run(CLI::App& app, CommonOptions& options, int argc, char** argv,
        const std::function<int()>& body) {
  // Every message names the tool; one whose App has no name is named by its file.
  const std::string program = argc > 0 ? std::string(argv[0]) : "nmt";
  const std::string tool = app.get_name().empty() ? program.substr(program.find_last_of('/') + 1) : app.get_name();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    print_line(tool + ": error: " + usage_error(app, tool, e, argc, argv) + " (" + tool + " --help lists the options)");
    return kExitUsage;
  }
  try {
    const CheckedStdoutScope checked;
    cpu_features();  // an unknown NMT_CPU_ISA stops every tool before it reads anything
    apply_threads(options.threads);
    const int code = body();
    check_stdout();
    return code;
  } catch (const Error& e) {
    print_line(tool + ": error: " + e.what());
  } catch (const c10::Error& e) {
    print_line(tool + ": error: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    print_line(tool + ": error: " + e.what());
  }
  if (const int reason = checked_stdout().error(); reason != 0 && !checked_stdout().reported())
    print_line(tool + ": error: cannot write stdout: " + std::strerror(reason));
  return kExitFailure;
}

void check_stdout() {
  std::cout.flush();
  const bool ours = std::cout.rdbuf() == &checked_stdout();
  const int reason = ours ? checked_stdout().error() : 0;
  if (std::cout.good() && reason == 0 && std::fflush(stdout) == 0 && !std::ferror(stdout)) return;
  if (ours) checked_stdout().mark_reported();
  throw Error(std::string("cannot write stdout: ") + (reason != 0 ? std::strerror(reason) : "write error"));
}

}  // namespace nmt::cli
