// nmt-average's command line (apps/nmt-average.cpp calls run): averages the weights of several checkpoints of one run into a new model file.
#include "nmt/tools/tools.h"

#include "nmt/base/process_setup.h"
#include "nmt/base/cli.h"
#include "nmt/models/average.h"

namespace nmt::tools::average_tool {

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Average the weights of checkpoints of one run (same model config and tokenizers) into one model file.\n"
               "Given one checkpoint, re-saves it for inference with its weights as they are, sealed with a\n"
               "checksum (files written before checkpoints were sealed carry none: --verbose of the tools says so)",
               "nmt-average"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::string output;
  std::vector<std::string> inputs;
  app.add_option("--output,-o", output, "The averaged model file (written atomically)")->required();
  app.add_option("checkpoints", inputs, "Checkpoints to average, e.g. DIR/step-*.pt")->required()->check(CLI::ExistingFile);
  return nmt::cli::run(app, common, argc, argv, [&] {
    nmt::write_average(inputs, output);
    return 0;
  });
}

}  // namespace nmt::tools::average_tool
