#pragma once
// Conventions shared by every nmt-* tool: --version, --threads, errors on stderr
// as one line, a non-zero exit code on failure.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace nmt::cli {

struct CommonOptions {
  int threads = 0;  // 0 = all cores
};

/// Adds --version (prints project and LibTorch version, then exits) and --threads.
void add_common_options(CLI::App& app, CommonOptions& options);

/// Applies --threads to LibTorch (intra-op pool) and returns the count used.
int apply_threads(int requested);

/// Parses argv, applies the common options, then runs `body`. Catches nmt::Error,
/// CLI11 errors and std::exception, prints "<tool>: error: <what>" on stderr and
/// returns 1 (CLI11's own code for usage errors). Use as `return run(app, argc, argv, body)`.
int run(CLI::App& app, CommonOptions& options, int argc, char** argv,
        const std::function<int()>& body);

/// Project version string, e.g. "0.1.0".
std::string project_version();

}  // namespace nmt::cli
