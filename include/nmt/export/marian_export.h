#pragma once
// Our Transformer as a Marian model (marian-dev's "transformer" type, src/models/transformer.h),
// the form OPUS-MT and Firefox Translations models ship in. What maps onto what:
//   weights [out, in] (LibTorch)     Marian's W [in, out] (transposed), biases [1, out]
//   self-attention qkv (stacked)     {prefix}_self_Wq/_Wk/_Wv, _bq/_bk/_bv, then _Wo/_bo
//   cross-attention query, key_value {prefix}_context_Wq, _Wk/_Wv, ...
//   feed-forward inner, outer        {prefix}_ffn_W1/_b1, _W2/_b2
//   LayerNorm weight, bias           {sublayer}_ln_scale, _ln_bias (after the sum: post-norm),
//                                    _ln_scale_pre, _ln_bias_pre (on the input: pre-norm)
//   norm post                        transformer-preprocess "", postprocess dan
//   norm pre_query                   transformer-preprocess n, postprocess da, postprocess-top n
//                                    (each stack's final norm: encoder_top_*, decoder_top_*)
//   share_embeddings / tie_output    Wemb and tied-embeddings-src / tied-embeddings(-all), else
//                                    encoder_Wemb, decoder_Wemb, decoder_ff_logit_out_W
//   output_bias (or none)            decoder_ff_logit_out_b (zeros without one: Marian always adds one)
//   <pad>, <s> (never emitted)       a bias of -1e9 in decoder_ff_logit_out_b
// What Marian computes and our model must therefore do too, or the export is refused by name:
// norm "post" or "pre_query" (Marian's pre-norm normalizes attention's queries but not its
// keys and values; our "pre" normalizes all three),
// positions "concatenated" (Marian's sinusoids), decoder_start "zeros" (Marian's first decoder
// input), ffn_activation relu or swish. Marian's LayerNorm epsilon is 1e-6; a model with
// another is exported with a note (model.transformer.layer_norm_epsilon 1e-6 matches exactly).
// The vocabularies are our SentencePiece models with their own ids (eos, unk as they say).
#include <string>
#include <vector>

#include "nmt/export/marian_format.h"
#include "nmt/models/checkpoint.h"
#include "nmt/text/shortlist.h"

namespace nmt {

/// Marian's LayerNorm epsilon in its Transformer (src/layers/generic.h).
constexpr double kMarianLayerNormEpsilon = 1e-6;

struct MarianModel {
  std::vector<MarianItem> items;  ///< the weights, then special:model.yml
  std::string config_yaml;        ///< special:model.yml's text
  std::vector<std::string> notes; ///< what is approximate (a different LayerNorm epsilon)
};

/// The model in Marian's layout. Throws nmt::Error naming what Marian cannot express: a model
/// that is not a Transformer, pre-norm, positions or a decoder start Marian does not compute.
/// With `int8_weights`, every matrix as intgemm8 (marian_format.h), as Firefox Translations'
/// models are: Marian then multiplies in int8 (its gemm-precision int8shiftAll).
MarianModel marian_model(const LoadedModel& loaded, const std::string& model_name, bool int8_weights = false);

/// The files of the model directory, named as Marian's own tools name them.
struct MarianFiles {
  static constexpr const char* kModel = "model.bin";
  static constexpr const char* kNpzModel = "model.npz";  ///< the same items, Marian's other form
  static constexpr const char* kDecoderConfig = "decoder.yml";  ///< marian-decoder -c decoder.yml
  static constexpr const char* kSharedVocabulary = "vocab.spm";
  static constexpr const char* kSourceVocabulary = "source.spm";
  static constexpr const char* kTargetVocabulary = "target.spm";
  static constexpr const char* kShortlist = "lex.s2t.bin";  ///< a lexical shortlist, binary (marian_shortlist.h)
};

/// Writes the model directory `directory` (model.bin, model.npz, the .spm vocabularies, decoder.yml),
/// whole or not at all; an existing one only with `replace`. With a `shortlist`, also lex.s2t.bin,
/// named in decoder.yml. Returns the model's notes.
std::vector<std::string> export_marian(const LoadedModel& loaded, const std::string& model_name,
                                       const std::string& directory, bool replace, bool int8_weights = false,
                                       const Shortlist* shortlist = nullptr);

}  // namespace nmt
