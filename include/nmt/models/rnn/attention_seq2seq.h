#pragma once
// Attention encoder-decoder (Bahdanau et al. 2015; Luong et al. 2015): bidirectional
// GRU encoder, GRU decoder attending over the source at every step.
//
// One step, with s the decoder state, c the context and a~ the attentional vector:
//   bahdanau: c_t = attend(s_{t-1});  s_t = GRU([emb(y_{t-1}); c_t (; a~_{t-1})], s_{t-1})
//   luong:    s_t = GRU([emb(y_{t-1}) (; a~_{t-1})], s_{t-1});  c_t = attend(s_t)
//   both:     a~_t = tanh(W_c [s_t; c_t]);  p(y_t) = softmax(W_o a~_t)
// "(; a~_{t-1})" is input feeding (Luong et al. 2015, sec. 3.3), on by default.
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/rnn.h>

#include <memory>

#include "nmt/base/config.h"
#include "nmt/models/model.h"
#include "nmt/models/registry.h"
#include "nmt/models/rnn/rnn_attention.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/models/rnn/rnn_encoder.h"

namespace nmt {

/// The registry entry: name "attention", settings in model.rnn.
ModelFamily attention_family();

/// What the decoder carries between steps: the source (once per hypothesis row; the RNN
/// attention reads it row by row) and the recurrent state.
struct AttentionState : DecoderState {
  torch::Tensor memory;       ///< [B, S, 2H] encoder states
  torch::Tensor keys;         ///< [B, S, H] their projection for the attention scores
  torch::Tensor source_mask;  ///< [B, S] true at real tokens
  torch::Tensor hidden;       ///< [B, L, H] per layer
  torch::Tensor feed;         ///< [B, H] the previous attentional vector (input feeding), or undefined
  /// The output layer's rows of the columns score_only() chose (null: every row); shared
  /// by clones, never written after score_only().
  std::shared_ptr<LinearImpl> output_rows;

  void reorder(const torch::Tensor& index) override;
  void select(const torch::Tensor& index) override;
  DecoderStatePtr clone() const override { return std::make_unique<AttentionState>(*this); }
};

class AttentionSeq2Seq : public Seq2SeqModel {
 public:
  explicit AttentionSeq2Seq(const ModelConfig& config);
  EncoderOutput encode(const torch::Tensor& source) override;
  DecoderStatePtr initial_state(const EncoderOutput& encoded) override;
  StepOutput step(const torch::Tensor& previous_tokens, DecoderState& state) override;
  /// The output layer's rows of `columns`, kept in the state.
  bool score_only(DecoderState& state, const torch::Tensor& columns) override;
  ForwardOutput forward(const torch::Tensor& source, const torch::Tensor& target_input) override;
  std::vector<LayerComputation> layer_computations() const override;

 private:
  /// Advances `state` by one token; returns the attentional vector [B, H] and the
  /// attention weights [B, S].
  std::pair<torch::Tensor, torch::Tensor> advance(const torch::Tensor& embedded, AttentionState& state);
  AttentionState make_state(const EncoderOutput& encoded);
  /// Shape: hidden [B, L, H], input [B, I] -> new hidden [B, L, H].
  torch::Tensor run_cells(const torch::Tensor& input, const torch::Tensor& hidden);

  ModelConfig config_;
  RnnConfig settings_;  ///< config_'s model.rnn, read once
  RnnEncoder encoder_{nullptr};
  Linear bridge_{nullptr};
  torch::nn::Embedding target_embedding_{nullptr};
  std::vector<torch::nn::GRUCell> cells_;
  RnnAttention attention_{nullptr};
  Linear combine_{nullptr};
  Linear output_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};

}  // namespace nmt
