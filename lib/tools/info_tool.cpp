// nmt-info's command line (apps/nmt-info.cpp calls run): what a model file is: family, size, tokenizers, how it was trained, its scores.
#include "nmt/tools/tools.h"

#include <iostream>

#include "nmt/base/cli.h"
#include "nmt/base/process_setup.h"
#include "nmt/training/checkpoint_report.h"

namespace nmt::tools::info_tool {

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Describe a model file: its family, size and architecture, its tokenizers, how and how long it was\n"
               "trained, the training state a last.pt carries, and (from the run's train.jsonl beside it) the\n"
               "validation scores of the weights it holds and the run's best",
               "nmt-info"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::vector<std::string> models;
  bool json = false;
  app.add_option("models", models, "Model files (best.pt, last.pt, averaged.pt, step-N.pt, ...)")->required();
  app.add_flag("--json", json, "One JSON object per file, on one line (every training setting included)");
  return nmt::cli::run(app, common, argc, argv, [&] {
    for (size_t i = 0; i < models.size(); ++i) {
      const auto report = nmt::checkpoint_report(models[i]);
      if (json) {
        std::cout << report.dump() << '\n';
        continue;
      }
      if (i > 0) std::cout << '\n';
      for (const auto& line : nmt::report_lines(report)) std::cout << line << '\n';
    }
    return 0;
  });
}

}  // namespace nmt::tools::info_tool
