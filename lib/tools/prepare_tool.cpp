// nmt-prepare's command line (apps/nmt-prepare.cpp calls run): tokenizes a parallel corpus once into a file that nmt-train reads in place.
#include "nmt/tools/tools.h"

#include <iostream>

#include "nmt/base/process_setup.h"
#include "nmt/base/cli.h"
#include "nmt/text/parallel_lines.h"
#include "nmt/text/prepared_corpus.h"
#include "nmt/text/tokenizer.h"

namespace nmt::tools::prepare_tool {

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Prepare a parallel corpus for nmt-train: tokenize it once (on all threads) into one file that "
               "training memory-maps (nmt-train --train-data FILE). nmt-train also does this by itself on raw "
               "text (--data-cache); prepare ahead of time to share one corpus between several runs",
               "nmt-prepare"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  nmt::PrepareOptions options;
  std::string source_spm, target_spm;
  app.add_option("--src", options.source_path, "Source text, one sentence per line")->required();
  app.add_option("--tgt", options.target_path, "Target text, line-aligned with --src")->required();
  app.add_option("--src-spm", source_spm, "Source SentencePiece model (nmt-spm-train)")->required();
  app.add_option("--tgt-spm", target_spm, "Target SentencePiece model (may be the same file)")->required();
  app.add_option("-o,--output", options.output_path, "The prepared corpus to write (written whole or not at all)")
      ->required();
  nmt::cli::add_progress_every(app, options.progress_every_seconds, "lines prepared");
  return nmt::cli::run(app, common, argc, argv, [&] {
    options.threads = nmt::cli::apply_threads(common.threads);
    const auto source_tokenizer = nmt::Tokenizer::from_file(source_spm);
    const auto target_tokenizer = nmt::Tokenizer::from_file(target_spm);
    options.source_tokenizer = &source_tokenizer;
    options.target_tokenizer = &target_tokenizer;
    options.log = [](const std::string& line) { nmt::cli::print_line(line); };
    nmt::cli::print_line("preparing " + nmt::parallel_files_name(options.source_path, options.target_path) + " on " +
                         std::to_string(options.threads) + " threads");
    const auto report = nmt::prepare_corpus(options);
    nmt::cli::print_line("wrote " + options.output_path + ": " + nmt::describe(report));
    return 0;
  });
}

}  // namespace nmt::tools::prepare_tool
