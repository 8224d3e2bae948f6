#pragma once
// Conventions shared by every nmt-* tool: --version, --threads, errors on stderr
// as one line, a non-zero exit code on failure.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace nmt::cli {

struct CommonOptions {
  int threads = 0;  // 0 = all cores
};

/// Adds --version (prints project and LibTorch version, then exits) and --threads.
void add_common_options(CLI::App& app, CommonOptions& options);

/// Adds --verbose, for the tools that load or train a model: once the model is set up,
/// the decisions fixed then (each kind of layer's kernel, the instruction set, oneDNN,
/// threads: models/compute_description.h) go to stderr through print_verbose.
void add_verbose_option(CLI::App& app, bool& verbose);

/// Adds --progress-every SECONDS, the one flag of every tool that writes progress lines:
/// seconds between lines on stderr, at least 0 (0: a line at every chance); `counts` says what
/// the lines report. The default is what `seconds` holds.
void add_progress_every(CLI::App& app, double& seconds, const std::string& counts);

/// Writes each line to stderr as "<tool>: <line>" (each with print_line).
void print_verbose(const CLI::App& app, const std::vector<std::string>& lines);

/// Writes `text` and a newline to stderr in one write(2) (std::cerr, unbuffered, makes a
/// write of every `<<`): a script, a supervisor or a test waiting for a line ("listening
/// on ...", an error, a result) never reads a part of it. A failed write is ignored, as
/// std::cerr's would be (stderr may be a closed pipe).
void print_line(const std::string& text);

/// Range checks for number options whose messages stay short ("--beam: 40 is not from 1
/// to 32"; CLI11's own print both bounds with six decimals, a 309-digit one included).
/// Bounds are inclusive, except positive()'s 0.
CLI::Validator in_range(double low, double high);
CLI::Validator at_least(double low);
CLI::Validator positive();

/// The most --threads a tool accepts; more than the cores is allowed but warned about.
constexpr int kMaxThreads = 1024;

/// Applies --threads to LibTorch (intra-op pool) and returns the count used: 0 means every
/// core; more than the cores uses the cores, saying so on stderr (threads beyond them
/// only wait for each other: 1000 threads took 1.1 s for one line on 2 cores).
int apply_threads(int requested);

/// Exit codes of every tool: 0 success, 1 failure (bad input, a failed write, ...),
/// 2 usage error (unknown flag, missing or invalid option value).
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

/// Parses argv, applies the common options, then runs `body`. Catches nmt::Error,
/// c10::Error and std::exception, prints "<tool>: error: <what>" on stderr and returns
/// kExitFailure; a usage error prints one line, "<tool>: error: <CLI11's message>", with the
/// option probably meant for an unknown one (--beam-size: did you mean --beam?), and
/// returns kExitUsage. After
/// `body`, stdout is flushed and checked: a failed write is an error, never exit 0.
/// Use as `return run(app, common, argc, argv, body)`.
int run(CLI::App& app, CommonOptions& options, int argc, char** argv,
        const std::function<int()>& body);

/// Flushes stdout; throws nmt::Error "cannot write stdout: REASON" if any write to it
/// failed (full disk, closed descriptor, broken pipe).
void check_stdout();

/// Project version string, e.g. "0.1.0".
std::string project_version();

}  // namespace nmt::cli
