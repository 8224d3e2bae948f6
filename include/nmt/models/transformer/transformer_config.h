#pragma once
// model.transformer: the Transformer family's settings, its section of the model config
// (nmt/base/config_section.h), registered by lib/models/transformer/transformer_config.cpp.
#include <string>

#include "nmt/base/config_section.h"

namespace nmt {

struct TransformerConfig {
  static constexpr const char* kSection = "transformer";

  int64_t d_model = 256;            ///< model width
  int64_t heads = 4;                ///< attention heads
  int64_t ffn_dim = 1024;           ///< position-wise feed-forward inner size
  int64_t encoder_layers = 3;       ///< encoder stack depth
  int64_t decoder_layers = 3;       ///< decoder stack depth
  std::string norm = "pre";         ///< post (paper) | pre (more stable) | pre_query (pre, self-attention's keys and values un-normalized: Marian < 1.11)
  double attention_dropout = 0.1;   ///< dropout on attention weights
  bool share_embeddings = false;    ///< one embedding for source and target (joint vocab only)
  bool tie_output = true;           ///< output layer shares the target embedding matrix
  bool output_bias = false;         ///< the output layer adds a bias per target piece (Marian's models have one)
  int64_t max_positions = 1024;     ///< longest sequence the positional encoding covers
  std::string positions = "interleaved";  ///< interleaved: sin/cos pairs, 10000^(2i/D) (the paper) |
                                          ///< concatenated: every sine, then every cosine, 10000^(i/(D/2-1))
                                          ///< (tensor2tensor, Marian)
  std::string decoder_start = "bos";      ///< the decoder's first input: bos (the <s> embedding) |
                                          ///< zeros (a zero embedding, as Marian)
  std::string ffn_activation = "relu";    ///< relu | swish (x * sigmoid(x), Marian's default)
  double layer_norm_epsilon = 1e-5;       ///< every LayerNorm's epsilon (Marian: 1e-6)
  std::string decoder_autoreg = "self_attention";  ///< the decoder's sublayer over its own prefix:
                                                   ///< self_attention | ssru (Marian's simpler simple
                                                   ///< recurrent unit, as Firefox's student models)

  template <typename V>
  void visit(V&& v) {
    v("d_model", d_model, kAtLeast1);
    v("heads", heads, kAtLeast1);
    v("ffn_dim", ffn_dim, kAtLeast1);
    v("encoder_layers", encoder_layers, kAtLeast1);
    v("decoder_layers", decoder_layers, kAtLeast1);
    v("norm", norm);
    v("attention_dropout", attention_dropout, kFraction);
    v("share_embeddings", share_embeddings);
    v("tie_output", tie_output);
    v("output_bias", output_bias);
    v("max_positions", max_positions, kAtLeast1);
    v("positions", positions);
    v("decoder_start", decoder_start);
    v("ffn_activation", ffn_activation);
    v("layer_norm_epsilon", layer_norm_epsilon, Interval{0, 1, true, true});
    v("decoder_autoreg", decoder_autoreg);
  }

  /// Configs from before the sections gave these directly under "model".
  static constexpr OldFlatKey kOldFlatKeys[] = {
      {"d_model", "d_model"},
      {"heads", "heads"},
      {"ffn_dim", "ffn_dim"},
      {"encoder_layers", "encoder_layers"},
      {"decoder_layers", "decoder_layers"},
      {"norm", "norm"},
      {"attention_dropout", "attention_dropout"},
      {"share_embeddings", "share_embeddings"},
      {"tie_output", "tie_output"},
      {"max_positions", "max_positions"}};
};

}  // namespace nmt
