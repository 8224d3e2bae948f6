#pragma once
// GRU encoder-decoder with a fixed context vector (Cho et al. 2014; Sutskever et al.
// 2014): the encoder's final state is the only thing the decoder sees of the source,
// fed to it at every step and to the output layer. No attention.
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/rnn.h>

#include <memory>

#include "nmt/base/config.h"
#include "nmt/models/model.h"
#include "nmt/models/registry.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/models/rnn/rnn_encoder.h"

namespace nmt {

/// The registry entry: name "gru", settings in model.rnn.
ModelFamily gru_family();

/// What the decoder carries between steps.
struct GruState : DecoderState {
  torch::Tensor context;  ///< [B, H] the encoder's final state, the decoder's only view of the source
  torch::Tensor hidden;   ///< [B, L, H] per layer
  /// The output layer's rows of the columns score_only() chose (null: every row); shared
  /// by clones, never written after score_only().
  std::shared_ptr<LinearImpl> output_rows;

  void reorder(const torch::Tensor& index) override { hidden = hidden.index_select(0, index); }
  void select(const torch::Tensor& index) override {
    reorder(index);
    context = context.index_select(0, index);
  }
  DecoderStatePtr clone() const override { return std::make_unique<GruState>(*this); }
};

class GruSeq2Seq : public Seq2SeqModel {
 public:
  explicit GruSeq2Seq(const ModelConfig& config);
  EncoderOutput encode(const torch::Tensor& source) override;
  DecoderStatePtr initial_state(const EncoderOutput& encoded) override;
  StepOutput step(const torch::Tensor& previous_tokens, DecoderState& state) override;
  /// The output layer's rows of `columns`, kept in the state.
  bool score_only(DecoderState& state, const torch::Tensor& columns) override;
  ForwardOutput forward(const torch::Tensor& source, const torch::Tensor& target_input) override;
  bool has_attention() const override { return false; }
  std::vector<LayerComputation> layer_computations() const override;

 private:
  /// Shape: tokens [B, T], context [B, H], hidden [layers, B, H] -> the output layer's
  /// input [B, T, H + E + H] (after dropout), hidden.
  std::pair<torch::Tensor, torch::Tensor> decode(const torch::Tensor& tokens,
                                                 const torch::Tensor& context,
                                                 const torch::Tensor& hidden);
  torch::Tensor initial_hidden(const torch::Tensor& context);

  ModelConfig config_;
  RnnConfig settings_;  ///< config_'s model.rnn, read once
  RnnEncoder encoder_{nullptr};
  torch::nn::Embedding target_embedding_{nullptr};
  Linear bridge_{nullptr};
  torch::nn::GRU decoder_{nullptr};
  Linear output_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};

}  // namespace nmt
