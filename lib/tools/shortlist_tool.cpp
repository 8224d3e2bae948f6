// nmt-shortlist's command line (apps/nmt-shortlist.cpp calls run): makes a vocabulary
// shortlist from a parallel corpus, for nmt-translate and nmt-serve --shortlist.
#include "nmt/tools/tools.h"

#include <cstdio>
#include <memory>
#include <string>

#include "nmt/base/cli.h"
#include "nmt/base/error.h"
#include "nmt/base/process_setup.h"
#include "nmt/models/checkpoint.h"
#include "nmt/text/lexical_translation.h"
#include "nmt/text/shortlist.h"
#include "nmt/text/parallel_lines.h"
#include "nmt/text/tokenizer.h"

namespace nmt::tools::shortlist_tool {
namespace {

// The model's own tokenizers (its weights are not read), or the two SentencePiece files.
CheckpointTokenizers tokenizers(const std::string& model_path, const std::string& source_spm,
                                const std::string& target_spm) {
  if (!model_path.empty()) return read_checkpoint_tokenizers(model_path);
  return {Tokenizer::from_file(source_spm), Tokenizer::from_file(target_spm)};
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

int run(int argc, char** argv) {
  nmt::set_up_process();
  CLI::App app{"Make a vocabulary shortlist from a parallel corpus: for each source piece the target pieces it "
               "translates to (IBM Model 1 probabilities), plus the most frequent target pieces. With nmt-translate and "
               "nmt-serve --shortlist FILE each line then chooses only among its candidates instead of the whole "
               "target vocabulary. The file is text, one line per entry (docs/shortlist.md)",
               "nmt-shortlist"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::string model_path, source_spm, target_spm, output_path;
  LexicalTranslationOptions estimate;
  ShortlistSelection selection;
  auto* model_option = app.add_option("-m,--model", model_path, "The model the shortlist is for (its tokenizers)")
                           ->check(CLI::ExistingFile);
  app.add_option("--src-spm", source_spm, "Source SentencePiece model, in place of -m")
      ->check(CLI::ExistingFile)->excludes(model_option);
  app.add_option("--tgt-spm", target_spm, "Target SentencePiece model, in place of -m")
      ->check(CLI::ExistingFile)->excludes(model_option);
  auto* source_option = app.add_option("--src", estimate.source_path, "Source side of the corpus (the training data)")
                            ->check(CLI::ExistingFile);
  auto* target_option = app.add_option("--tgt", estimate.target_path, "Target side, line-aligned with --src")
                            ->check(CLI::ExistingFile);
  app.add_option("--train-data", estimate.prepared_path,
                 "In place of --src and --tgt: a prepared corpus (nmt-prepare, with the model's tokenizers), read in "
                 "place on every pass instead of tokenized again (faster on a large corpus)")
      ->check(CLI::ExistingFile)->excludes(source_option)->excludes(target_option);
  app.add_option("-o,--output", output_path, "The shortlist to write (whole or not at all)")->required();
  app.add_option("--best", selection.best, "Target pieces kept per source piece, most probable first")
      ->check(nmt::cli::in_range(0, 100000))->capture_default_str();
  app.add_option("--min-prob", selection.min_probability, "Keep only translations with at least this p(target | source)")
      ->check(nmt::cli::in_range(0, 1))->capture_default_str();
  app.add_option("--frequent", selection.frequent, "The most frequent target pieces, candidates for every line")
      ->check(nmt::cli::in_range(0, 10000000))->capture_default_str();
  app.add_option("--iterations", estimate.iterations, "IBM Model 1 passes over the corpus")
      ->check(nmt::cli::in_range(1, 100))->capture_default_str();
  app.add_option("--max-lines", estimate.max_pairs, "Read at most this many lines of the corpus (0: all)")
      ->check(nmt::cli::in_range(0, 1e15))->capture_default_str();
  nmt::cli::add_progress_every(app, estimate.progress_every_seconds, "sentence pairs read in the pass");
  app.callback([&] {  // during parsing: a usage error (exit 2)
    if (model_path.empty() && (source_spm.empty() || target_spm.empty()))
      throw CLI::ValidationError("the tokenizers", "give the model (-m) or both --src-spm and --tgt-spm");
    if (estimate.prepared_path.empty() && (estimate.source_path.empty() || estimate.target_path.empty()))
      throw CLI::ValidationError("the corpus", "give --src and --tgt, or --train-data");
  });
  return nmt::cli::run(app, common, argc, argv, [&] {
    const auto vocabularies = tokenizers(model_path, source_spm, target_spm);
    estimate.source_tokenizer = &vocabularies.source;
    estimate.target_tokenizer = &vocabularies.target;
    estimate.log = [](const std::string& line) { nmt::cli::print_line("nmt-shortlist: " + line); };
    const auto table = estimate_lexical_translation(estimate);
    const auto shortlist = select_shortlist(table, selection);
    shortlist.write(output_path, vocabularies.source, vocabularies.target,
                    {{"made_by", "nmt-shortlist"},
                     {"corpus", estimate.prepared_path.empty() ? nmt::parallel_files_name(estimate.source_path, estimate.target_path)
                                                               : estimate.prepared_path},
                     {"sentence_pairs", std::to_string(table.pairs)},
                     {"iterations", std::to_string(estimate.iterations)},
                     {"best", std::to_string(selection.best)},
                     {"min_probability", number_text(selection.min_probability)},
                     {"frequent", std::to_string(selection.frequent)}});
    nmt::cli::print_line("nmt-shortlist: wrote " + output_path + ": " + describe(shortlist));
    return 0;
  });
}

}  // namespace nmt::tools::shortlist_tool
