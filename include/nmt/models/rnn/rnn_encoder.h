#pragma once
// GRU encoder over padded batches: packed so that padding never reaches the states.
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/modules/dropout.h>

#include "nmt/base/config.h"
#include "nmt/models/model.h"
#include "nmt/models/rnn/rnn_config.h"

namespace nmt {

/// Checks the sizes in model.rnn that both RNN families use; throws nmt::Error naming the field.
void validate_rnn_sizes(const RnnConfig& config);

struct RnnEncoderOutput {
  torch::Tensor states;  ///< [B, S, directions * hidden], zeros at padding
  torch::Tensor final;   ///< [B, directions * hidden] top layer's last state (per direction)
};

class RnnEncoderImpl : public torch::nn::Module {
 public:
  RnnEncoderImpl(int64_t vocab, int64_t embedding_dim, int64_t hidden_dim, int64_t layers,
                 bool bidirectional, double dropout);
  /// Shape: source [B, S] int64 (0 = pad) -> states [B, S, dirs*hidden], final [B, dirs*hidden].
  RnnEncoderOutput forward(const torch::Tensor& source);
  /// forward() as the model interface's EncoderOutput (both RNN families' encode()): memory =
  /// states, the source's padding mask, final_states = final.
  EncoderOutput encode(const torch::Tensor& source);

 private:
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::GRU gru_{nullptr};
  int64_t layers_;
  int64_t directions_;
};
TORCH_MODULE(RnnEncoder);

}  // namespace nmt
