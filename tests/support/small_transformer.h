#pragma once
// A Transformer small enough to build and run in milliseconds, without dropout: the
// precision tests convert and compare it.
#include "nmt/base/config.h"
#include "nmt/models/transformer/transformer_config.h"

namespace nmt::test {

inline ModelConfig small_transformer(bool tie_output = true) {
  ModelConfig config;
  config.arch = "transformer";
  config.source_vocab = 30;
  config.target_vocab = 30;
  config.dropout = 0;
  config.section<TransformerConfig>().d_model = 32;
  config.section<TransformerConfig>().heads = 4;
  config.section<TransformerConfig>().ffn_dim = 64;
  config.section<TransformerConfig>().encoder_layers = 2;
  config.section<TransformerConfig>().decoder_layers = 2;
  config.section<TransformerConfig>().attention_dropout = 0;
  config.section<TransformerConfig>().max_positions = 32;
  config.section<TransformerConfig>().tie_output = tie_output;
  return config;
}

}  // namespace nmt::test
