#include "nmt/models/rnn/gru_seq2seq.h"

#include <torch/nn/functional/activation.h>


namespace nmt {

ModelFamily gru_family() {
  return {"gru", "GRU encoder-decoder with a fixed context vector (Cho et al. 2014); settings in model.rnn", "rnn",
          [](const ModelConfig& config) { validate_rnn_sizes(config.section<RnnConfig>()); },
          [](const ModelConfig& config) { return std::make_shared<GruSeq2Seq>(config); }};
}

GruSeq2Seq::GruSeq2Seq(const ModelConfig& config) : config_(config), settings_(config.section<RnnConfig>()) {
  const auto E = settings_.embedding_dim, H = settings_.hidden_dim, L = settings_.layers;
  encoder_ = register_module("encoder", RnnEncoder(config.source_vocab, E, H, L,
                                                   /*bidirectional=*/false, config.dropout));
  target_embedding_ = register_module(
      "target_embedding",
      torch::nn::Embedding(torch::nn::EmbeddingOptions(config.target_vocab, E).padding_idx(0)));
  bridge_ = register_module("bridge", Linear(H, L * H));
  decoder_ = register_module("decoder", torch::nn::GRU(torch::nn::GRUOptions(E + H, H)
                                                           .num_layers(L)
                                                           .batch_first(true)
                                                           .dropout(L > 1 ? config.dropout : 0.0)));
  // The output sees the state, the previous word and the context (Cho et al. 2014, eq. 3).
  output_ = register_module("output", Linear(H + E + H, config.target_vocab));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

EncoderOutput GruSeq2Seq::encode(const torch::Tensor& source) { return encoder_->encode(source); }

torch::Tensor GruSeq2Seq::initial_hidden(const torch::Tensor& context) {
  // [B, L*H] -> [L, B, H]
  return torch::tanh(bridge_(context))
      .view({context.size(0), settings_.layers, settings_.hidden_dim})
      .transpose(0, 1)
      .contiguous();
}

DecoderStatePtr GruSeq2Seq::initial_state(const EncoderOutput& encoded) {
  auto state = std::make_unique<GruState>();
  state->context = encoded.final_states;
  state->hidden = initial_hidden(state->context).transpose(0, 1);  // batch first
  return state;
}

std::pair<torch::Tensor, torch::Tensor> GruSeq2Seq::decode(const torch::Tensor& tokens,
                                                           const torch::Tensor& context,
                                                           const torch::Tensor& hidden) {
  const auto T = tokens.size(1);
  const auto embedded = dropout_(target_embedding_(tokens));
  const auto repeated = context.unsqueeze(1).expand({-1, T, -1});
  auto [states, next_hidden] = decoder_(torch::cat({embedded, repeated}, 2), hidden);
  const auto features = torch::cat({states, embedded, repeated}, 2);
  return {dropout_(features), next_hidden};
}

StepOutput GruSeq2Seq::step(const torch::Tensor& previous_tokens, DecoderState& base) {
  auto& state = state_as<GruState>(base);
  const auto hidden = state.hidden.transpose(0, 1).contiguous();
  auto [features, next_hidden] = decode(previous_tokens.unsqueeze(1), state.context, hidden);
  state.hidden = next_hidden.transpose(0, 1);
  ++state.step;
  StepOutput output;
  const auto last = features.squeeze(1);
  output.scores = NextTokenScores::logits(state.output_rows ? state.output_rows->forward(last) : output_(last));
  return output;
}

bool GruSeq2Seq::score_only(DecoderState& state, const torch::Tensor& columns) {
  state_as<GruState>(state).output_rows = output_->output_rows(columns);
  return true;
}

ForwardOutput GruSeq2Seq::forward(const torch::Tensor& source, const torch::Tensor& target_input) {
  const auto context = encoder_(source).final;
  return {output_(decode(target_input, context, initial_hidden(context)).first)};
}

std::vector<LayerComputation> GruSeq2Seq::layer_computations() const {
  return {{"Linear layers (bridge, output)", describe_linear_path(linear_path(), device())},
          {"encoder and decoder GRU (nn::GRU)", "fp32, LibTorch"}};
}

}  // namespace nmt
