// nmt-spm-train's command line (apps/nmt-spm-train.cpp calls run): trains the SentencePiece tokenizer that nmt-train and the models use.
#include "nmt/tools/tools.h"

#include <iostream>

#include "nmt/base/process_setup.h"
#include "nmt/base/cli.h"
#include "nmt/base/progress_lines.h"
#include "nmt/text/tokenizer.h"

namespace nmt::tools::spm_train_tool {

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Train a SentencePiece tokenizer (writes PREFIX.model and PREFIX.vocab)",
               "nmt-spm-train"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  nmt::TokenizerTrainOptions options;
  app.add_option("--input", options.inputs, "Text files, one sentence per line")
      ->required()
      ->expected(1, -1);
  app.add_option("--model-prefix", options.model_prefix, "Output prefix: PREFIX.model, PREFIX.vocab")
      ->required();
  app.add_option("--vocab-size", options.vocab_size, "Vocabulary size")->capture_default_str();
  app.add_option("--model-type", options.model_type, "Segmentation algorithm")
      ->check(CLI::IsMember({"bpe", "unigram"}))
      ->capture_default_str();
  app.add_option("--character-coverage", options.character_coverage,
                 "Share of characters covered (1.0 for small alphabets, 0.9995 for CJK)")
      ->capture_default_str();
  app.add_option("--max-sentences", options.max_sentences,
                 "Train on a uniform sample of at most N sentences of all inputs together, drawn while reading "
                 "(bounded memory on any corpus; SentencePiece itself advises against more); 0 = all")
      ->check(nmt::cli::at_least(0))
      ->capture_default_str();
  app.add_option("--seed", options.seed, "Seed of the sample: the same inputs and seed give the same tokenizer")
      ->capture_default_str();
  return nmt::cli::run(app, common, argc, argv, [&] {
    options.threads = nmt::cli::apply_threads(common.threads);
    const auto report = [&] {
      const nmt::ProgressHeartbeat heartbeat("nmt-spm-train", "reading the text and training the tokenizer");
      return nmt::train_tokenizer(options);
    }();
    if (report.sentences_used < report.sentences_read)
      nmt::cli::print_line("sampled " + std::to_string(report.sentences_used) + " of " +
                           std::to_string(report.sentences_read) + " sentences (--max-sentences " +
                           std::to_string(options.max_sentences) + ", --seed " + std::to_string(options.seed) + ")");
    nmt::cli::print_line("wrote " + options.model_prefix + ".model and " + options.model_prefix + ".vocab");
    return 0;
  });
}

}  // namespace nmt::tools::spm_train_tool
