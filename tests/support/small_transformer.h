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
  auto& transformer = config.section<TransformerConfig>();
  transformer.d_model = 32;
  transformer.heads = 4;
  transformer.ffn_dim = 64;
  transformer.encoder_layers = 2;
  transformer.decoder_layers = 2;
  transformer.attention_dropout = 0;
  transformer.max_positions = 32;
  transformer.tie_output = tie_output;
  return config;
}

}  // namespace nmt::test
