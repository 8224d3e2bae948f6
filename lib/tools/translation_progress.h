#pragma once
// Private to lib/tools: --progress-every for the tools that translate a file (nmt-translate,
// nmt-align), declared once: a line "<tool>: N lines translated, S sentences/s (T s)" on
// stderr at most every SECONDS while a Translator works through its input.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "nmt/base/cli.h"
#include "nmt/base/progress_lines.h"
#include "nmt/decoding/translator.h"

namespace nmt::tools {

class TranslationProgress {
 public:
  explicit TranslationProgress(CLI::App& app) {
    cli::add_progress_every(app, seconds_, "lines translated");
  }

  /// From now on, `translator` reports its progress as `tool`. The translator must not
  /// outlive this object.
  void report(Translator& translator, const std::string& tool) {
    lines_ = std::make_unique<ProgressLines>(tool, progress_interval(seconds_));
    translator.on_lines_done([this](int64_t lines) {
      done_ += lines;
      lines_->maybe_say([&] {
        char text[96];
        std::snprintf(text, sizeof text, "%lld lines translated, %.1f sentences/s", static_cast<long long>(done_),
                      static_cast<double>(done_) / std::max(lines_->elapsed_seconds(), 1e-9));
        return std::string(text);
      });
    });
  }

 private:
  double seconds_ = 10;
  std::unique_ptr<ProgressLines> lines_;
  int64_t done_ = 0;
};

}  // namespace nmt::tools
