// nmt-import's command line (apps/nmt-import.cpp calls run): a model of another toolkit as one
// of our checkpoints, which every tool then takes.
#include "nmt/tools/tools.h"

#include <filesystem>
#include <optional>

#include "nmt/base/atomic_file.h"
#include "nmt/base/cli.h"
#include "nmt/base/error.h"
#include "nmt/base/process_setup.h"
#include "nmt/export/marian_import.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/transformer/transformer_config.h"

namespace nmt::tools::import_tool {

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Read a model of another toolkit into a checkpoint that every nmt tool takes.\n"
               "marian: a Marian Transformer (model.bin or model.npz; float32, float16 or Firefox's int8)\n"
               "with its SentencePiece vocabularies (.spm: one for both sides, or the source's then the\n"
               "target's) and, for OPUS-MT's models, the vocab.yml that gives Marian's ids (--vocab-ids).\n"
               "The checkpoint computes what Marian computes (post-norm or pre-norm, Marian's sinusoids, a\n"
               "zero first decoder input, the output bias, an SSRU decoder); the vocabularies get our\n"
               "special ids (<pad> and <s> added where missing); int8 (intgemm8) weights are dequantized.\n"
               "Refused by name: what our Transformer cannot compute (average-attention decoders,\n"
               "factors, trained positions). With --shortlist, Marian's lexical shortlist, binary\n"
               "(Firefox's lex.*.s2t.bin) or text (lex.s2t, gzipped or not, cut as Marian's\n"
               "--shortlist FILE 100 100 0 would: --shortlist-cut), is written as one of ours, for\n"
               "nmt-translate --shortlist.\n"
               "Then, for example:\n"
               "  nmt-import --format marian --model model.bin --vocab vocab.spm --output model.pt\n"
               "  nmt-import --format marian --model opus.npz --vocab source.spm target.spm \\\n"
               "    --vocab-ids opus.vocab.yml --output opus.pt\n"
               "  nmt-import --format marian --model model.deen.intgemm.alphas.bin --vocab vocab.deen.spm \\\n"
               "    --shortlist lex.50.50.deen.s2t.bin --output deen.pt\n"
               "  nmt-translate --model deen.pt --shortlist deen.shortlist.tsv < input.txt",
               "nmt-import"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::string format, model_path, output;
  std::vector<std::string> vocabularies, id_lists;
  bool force = false;
  app.add_option("--format", format, "What to read")->required()->check(CLI::IsMember({"marian"}));
  app.add_option("--model,-m", model_path, "The model file (Marian: model.bin)")->required()->check(CLI::ExistingFile);
  app.add_option("--vocab", vocabularies, "SentencePiece vocabularies: one for both sides, or source then target")
      ->required()
      ->expected(1, 2)
      ->check(CLI::ExistingFile);
  app.add_option("--vocab-ids", id_lists,
                 "Marian's vocab.yml (OPUS-MT): the ids of the pieces, one file for both sides or source then target; "
                 "without it, the SentencePiece models' own ids")
      ->expected(1, 2)
      ->check(CLI::ExistingFile);
  app.add_option("--output,-o", output, "The checkpoint to write (.pt; appears whole or not at all)")->required();
  std::string shortlist_path, shortlist_output;
  app.add_option("--shortlist", shortlist_path,
                 "marian: its lexical shortlist, binary (lex.*.s2t.bin) or text (lex.s2t, \"target source "
                 "probability\" lines, gzipped or not), written as one of ours (docs/shortlist.md)")
      ->check(CLI::ExistingFile);
  std::vector<double> cut_values;
  app.add_option("--shortlist-cut", cut_values,
                 "For a text --shortlist, Marian's FIRST BEST [THRESHOLD] (default 100 100 0): the first target ids "
                 "always, the BEST most probable targets per source piece, only probabilities above THRESHOLD")
      ->expected(2, 3);
  app.add_option("--shortlist-output", shortlist_output,
                 "Where that shortlist goes (default: the checkpoint's path with .shortlist.tsv for its extension)");
  app.add_flag("--force", force, "Replace --output if it exists");
  return nmt::cli::run(app, common, argc, argv, [&] {
    if (!shortlist_output.empty() && shortlist_path.empty()) throw nmt::Error("--shortlist-output needs --shortlist");
    if (!cut_values.empty() && shortlist_path.empty()) throw nmt::Error("--shortlist-cut needs --shortlist");
    std::optional<nmt::MarianShortlistCut> cut;
    if (!cut_values.empty()) {
      for (int i = 0; i < 2; ++i) {
        const double value = cut_values[i];
        if (value < 0 || value > 1e9 || value != static_cast<double>(static_cast<uint64_t>(value)))
          throw nmt::Error("--shortlist-cut: FIRST and BEST are whole numbers, got " + std::to_string(value));
      }
      cut = nmt::MarianShortlistCut{static_cast<uint64_t>(cut_values[0]), static_cast<uint64_t>(cut_values[1]),
                                    cut_values.size() > 2 ? static_cast<float>(cut_values[2]) : 0.0f};
    }
    if (!shortlist_path.empty() && shortlist_output.empty())
      shortlist_output = std::filesystem::path(output).replace_extension(".shortlist.tsv").string();
    for (const auto& path : {output, shortlist_output})
      if (!path.empty() && std::filesystem::exists(path) && !force) throw nmt::Error(path + " exists (--force replaces it)");
    auto imported = nmt::import_marian(model_path, vocabularies, id_lists, shortlist_path, cut);
    auto& loaded = imported.loaded;
    const auto& settings = loaded.config.model.section<nmt::TransformerConfig>();
    // The shortlist is written first and appears only once the checkpoint did: a failure
    // of either leaves neither (the writer's temporary goes with it).
    std::optional<nmt::AtomicFileWriter> shortlist_file;
    if (imported.shortlist) {
      shortlist_file.emplace(shortlist_output);
      imported.shortlist->write_to(*shortlist_file, loaded.source_tokenizer, loaded.target_tokenizer,
                                   {{"made_by", "nmt-import"}, {"marian_shortlist", shortlist_path}, {"model", output}});
    }
    nmt::save_checkpoint(output, loaded.config, *loaded.model, loaded.source_tokenizer, loaded.target_tokenizer);
    for (const auto& note : imported.notes) nmt::cli::print_line("nmt-import: note: " + note);
    if (shortlist_file) {
      shortlist_file->commit();
      nmt::cli::print_line("nmt-import: wrote " + shortlist_output + " (" + nmt::describe(*imported.shortlist) + ")");
    }
    nmt::cli::print_line("nmt-import: wrote " + output + " (a Transformer: d_model " +
                         std::to_string(settings.d_model) + ", " +
                         std::to_string(settings.encoder_layers) + "+" +
                         std::to_string(settings.decoder_layers) + " layers, vocabularies " +
                         std::to_string(loaded.config.model.source_vocab) + " and " +
                         std::to_string(loaded.config.model.target_vocab) + ")");
    return 0;
  });
}

}  // namespace nmt::tools::import_tool
