#pragma once
// A Marian Transformer (marian-dev's "transformer" type: OPUS-MT's, Firefox Translations' and
// our own Marian exports) as one of our models: its
// special:model.yml becomes our config, its items our weights (export/marian_weights.h), its
// SentencePiece vocabularies our tokenizers with our special ids (text/sentencepiece_ids.h;
// the embedding rows and output columns follow). What the result computes is what Marian
// computes: post-norm, or pre-norm as the Marian version that wrote it trained it (norm
// pre_query before 1.11, pre from 1.11: docs/marian.md), Marian's sinusoids, a zero first
// decoder input, LayerNorm epsilon 1e-6, the output bias, an SSRU decoder; our searches' rule
// that <pad> and <s> are never emitted adds nothing, as Marian's vocabularies have neither.
// Whatever our Transformer cannot express is refused by name: another model type, pre-norm
// without final norms, an average-attention decoder, factors, other FFN depths, trained
// positions. float16 weights are widened to float32; int8 weights (intgemm8, Firefox's) are
// dequantized; their activation multipliers (_QuantMultA) are not used.
// OPUS-MT's form: model.npz, source.spm and target.spm for segmentation, vocab.yml for the ids.
#include <optional>
#include <string>
#include <vector>

#include "nmt/export/marian_shortlist.h"
#include "nmt/models/checkpoint.h"
#include "nmt/text/shortlist.h"

namespace nmt {

struct MarianImport {
  LoadedModel loaded;              ///< the model in eval mode, with its config and tokenizers
  std::vector<std::string> notes;  ///< what the import decided that a user should know
  std::optional<Shortlist> shortlist;  ///< Marian's lexical shortlist in our ids, where one was given
};

/// Reads `model_path` (a Marian .bin, or .npz: told apart by their bytes) with `vocabularies`:
/// one SentencePiece model (.spm) for both sides, or the source's and the target's. Marian's ids
/// are the SentencePiece models' own unless `id_lists` gives Marian's vocab.yml (one for both
/// sides, or two), as OPUS-MT's models have. With `shortlist_path`, Marian's lexical shortlist
/// for the same vocabularies, read as what Marian decodes a sentence over
/// (export/marian_shortlist.h): binary (lex.*.s2t.bin), or text (lex.s2t, gzipped or not), cut
/// as `text_cut` says (Marian's defaults where not given; refused with a binary file, whose
/// header says). Throws nmt::Error naming the file, the item or the config key at fault.
MarianImport import_marian(const std::string& model_path, const std::vector<std::string>& vocabularies,
                           const std::vector<std::string>& id_lists = {}, const std::string& shortlist_path = "",
                           const std::optional<MarianShortlistCut>& text_cut = std::nullopt);

}  // namespace nmt
