#pragma once
// A Transformer small enough to build and run in milliseconds, without dropout: the
// precision tests convert and compare it.
#include "nmt/base/config.h"

namespace nmt::test {

inline ModelConfig small_transformer(bool tie_output = true) {
  ModelConfig config;
  config.arch = "transformer";
  config.source_vocab = 30;
  config.target_vocab = 30;
  config.dropout = 0;
  config.transformer.d_model = 32;
  config.transformer.heads = 4;
  config.transformer.ffn_dim = 64;
  config.transformer.encoder_layers = 2;
  config.transformer.decoder_layers = 2;
  config.transformer.attention_dropout = 0;
  config.transformer.max_positions = 32;
  config.transformer.tie_output = tie_output;
  return config;
}

}  // namespace nmt::test
