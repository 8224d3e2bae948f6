// nmt-export's command line (apps/nmt-export.cpp calls run): writes a trained model in another toolkit's format, for serving it there.
#include "nmt/tools/tools.h"

#include <iostream>
#include <optional>

#include "nmt/base/cli.h"
#include "nmt/base/process_setup.h"
#include "nmt/export/ctranslate2_export.h"
#include "nmt/export/marian_export.h"
#include "nmt/models/checkpoint.h"

namespace nmt::tools::export_tool {

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Write a trained model in another toolkit's format.\n"
               "ctranslate2: a CTranslate2 4.x model directory (model.bin, config.json, the vocabulary JSON\n"
               "files) for Transformer checkpoints, with our SentencePiece models beside it\n"
               "(source_spm.model, target_spm.model). Weights are written in float32; CTranslate2\n"
               "quantizes them when it loads the model (compute_type int8, int8_float32, ...).\n"
               "Then, for example:\n"
               "  spm_encode --model=DIR/source_spm.model < in.de > in.pieces\n"
               "  ct2-translator --model DIR --src in.pieces --beam_size 5 | spm_decode --model=DIR/target_spm.model\n"
               "marian: a Marian model directory (model.bin with its special:model.yml, our SentencePiece\n"
               "models as vocab.spm or source.spm and target.spm, decoder.yml) for Transformer checkpoints\n"
               "trained with model.transformer.positions concatenated and decoder_start zeros (what Marian\n"
               "computes; others are refused by name). Then, for example:\n"
               "  marian-decoder -c DIR/decoder.yml < in.de\n"
               "--shortlist FILE (nmt-shortlist's) goes with either: CTranslate2's vmap.txt, Marian's lex.s2t.bin.",
               "nmt-export"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::string format, model_path, output;
  bool force = false, int8_weights = false;
  app.add_option("--format", format, "What to write")->required()->check(CLI::IsMember({"ctranslate2", "marian"}));
  app.add_option("--model,-m", model_path, "A Transformer checkpoint (.pt)")->required()->check(CLI::ExistingFile);
  app.add_option("--output,-o", output, "The model directory to create (appears whole or not at all)")->required();
  app.add_flag("--int8-weights", int8_weights,
               "marian: model.bin's matrices as int8 (intgemm8), as Firefox Translations' models are "
               "(Marian then multiplies in int8); model.npz stays float32");
  std::string shortlist_path;
  app.add_option("--shortlist", shortlist_path,
                 "Also write this vocabulary shortlist (nmt-shortlist): ctranslate2: as the model's vmap.txt, which "
                 "CTranslate2 reads when asked to translate with use_vmap; marian: as lex.s2t.bin, Marian's binary "
                 "lexical shortlist, named in decoder.yml")
      ->check(CLI::ExistingFile);
  app.add_flag("--force", force, "Replace --output if it exists (the old directory goes once the new one is complete)");
  return nmt::cli::run(app, common, argc, argv, [&] {
    const auto loaded = nmt::load_model(model_path);
    std::optional<nmt::Shortlist> shortlist;
    if (!shortlist_path.empty())
      shortlist = nmt::Shortlist::read(shortlist_path, loaded.source_tokenizer, loaded.target_tokenizer);
    if (format == "marian") {
      for (const auto& note :
           nmt::export_marian(loaded, model_path, output, force, int8_weights, shortlist ? &*shortlist : nullptr))
        nmt::cli::print_line("nmt-export: note: " + note);
      nmt::cli::print_line("nmt-export: wrote " + output + " (Marian transformer, binary file version " +
                           std::to_string(nmt::kMarianBinaryVersion) + ")");
      return 0;
    }
    if (int8_weights) throw nmt::Error("--int8-weights is for --format marian (CTranslate2 quantizes when it loads)");
    nmt::export_ctranslate2(loaded, model_path, output, force, shortlist ? &*shortlist : nullptr);
    nmt::cli::print_line("nmt-export: wrote " + output + " (CTranslate2 TransformerSpec revision " +
                         std::to_string(nmt::kCtranslate2TransformerRevision) + ", binary version " +
                         std::to_string(nmt::kCtranslate2BinaryVersion) + ")");
    return 0;
  });
}

}  // namespace nmt::tools::export_tool
