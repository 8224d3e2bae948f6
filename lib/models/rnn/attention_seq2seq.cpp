#include "nmt/models/rnn/attention_seq2seq.h"

#include <algorithm>

#include "nmt/base/error.h"
#include "nmt/models/rnn/gru_cell_step.h"

namespace nmt {

ModelFamily attention_family() {
  return {"attention",
          "bi-GRU encoder, GRU decoder with Bahdanau or Luong attention; settings in model.rnn", "rnn",
          [](const ModelConfig& config) {
            const auto& settings = config.section<RnnConfig>();
            validate_rnn_sizes(settings);
            if (settings.hidden_dim % 2 != 0)
              throw Error("invalid config: model.rnn.hidden_dim must be even for the bidirectional encoder");
            const auto& kinds = RnnAttentionImpl::kinds();
            if (std::find(kinds.begin(), kinds.end(), settings.attention) == kinds.end())
              throw Error("invalid config: model.rnn.attention must be bahdanau, dot, general or concat, not \"" +
                          settings.attention + "\"");
          },
          [](const ModelConfig& config) { return std::make_shared<AttentionSeq2Seq>(config); }};
}

AttentionSeq2Seq::AttentionSeq2Seq(const ModelConfig& config)
    : config_(config), settings_(config.section<RnnConfig>()) {
  const auto E = settings_.embedding_dim, H = settings_.hidden_dim, L = settings_.layers;
  // Each direction gets H/2 so the memory is H wide, like the decoder (needed by dot).
  encoder_ = register_module(
      "encoder", RnnEncoder(config.source_vocab, E, H / 2, L, /*bidirectional=*/true, config.dropout));
  bridge_ = register_module("bridge", Linear(H, L * H));
  target_embedding_ = register_module(
      "target_embedding",
      torch::nn::Embedding(torch::nn::EmbeddingOptions(config.target_vocab, E).padding_idx(0)));
  attention_ = register_module("attention", RnnAttention(settings_.attention, H, H));
  const bool bahdanau = attention_->uses_previous_state();
  const int64_t input_dim = E + (bahdanau ? H : 0) + (settings_.input_feeding ? H : 0);
  for (int64_t layer = 0; layer < L; ++layer)
    cells_.push_back(register_module("cell" + std::to_string(layer),
                                      torch::nn::GRUCell(layer == 0 ? input_dim : H, H)));
  combine_ = register_module("combine", Linear(2 * H, H, /*with_bias=*/false));
  output_ = register_module("output", Linear(H, config.target_vocab));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

EncoderOutput AttentionSeq2Seq::encode(const torch::Tensor& source) { return encoder_->encode(source); }

void AttentionState::reorder(const torch::Tensor& index) {
  hidden = hidden.index_select(0, index);
  if (feed.defined()) feed = feed.index_select(0, index);
}

void AttentionState::select(const torch::Tensor& index) {
  reorder(index);
  memory = memory.index_select(0, index);
  keys = keys.index_select(0, index);
  source_mask = source_mask.index_select(0, index);
}

AttentionState AttentionSeq2Seq::make_state(const EncoderOutput& encoded) {
  const auto B = encoded.memory.size(0);
  AttentionState state;
  state.memory = encoded.memory;
  state.source_mask = encoded.source_mask;
  state.keys = attention_->project_keys(encoded.memory);
  state.hidden = torch::tanh(bridge_(encoded.final_states)).view({B, settings_.layers, settings_.hidden_dim});
  if (settings_.input_feeding) state.feed = torch::zeros({B, settings_.hidden_dim}, encoded.memory.options());
  return state;
}

DecoderStatePtr AttentionSeq2Seq::initial_state(const EncoderOutput& encoded) {
  return std::make_unique<AttentionState>(make_state(encoded));
}

torch::Tensor AttentionSeq2Seq::run_cells(const torch::Tensor& input, const torch::Tensor& hidden) {
  std::vector<torch::Tensor> layers;
  auto x = input;
  for (size_t layer = 0; layer < cells_.size(); ++layer) {
    if (layer > 0) x = dropout_(x);
    x = gru_cell_step(cells_[layer], linear_path(), x, hidden.select(1, static_cast<int64_t>(layer)));
    layers.push_back(x);
  }
  return torch::stack(layers, 1);
}

std::pair<torch::Tensor, torch::Tensor> AttentionSeq2Seq::advance(const torch::Tensor& embedded,
                                                                   AttentionState& state) {
  const auto& memory = state.memory;
  const auto& keys = state.keys;
  const auto& mask = state.source_mask;
  auto hidden = state.hidden;
  std::vector<torch::Tensor> inputs{embedded};
  torch::Tensor context, weights;
  if (attention_->uses_previous_state()) {
    std::tie(context, weights) = attention_(hidden.select(1, -1), keys, memory, mask);
    inputs.push_back(context);
  }
  if (settings_.input_feeding) inputs.push_back(state.feed);
  hidden = run_cells(torch::cat(inputs, 1), hidden);
  const auto top = hidden.select(1, -1);
  if (!attention_->uses_previous_state()) std::tie(context, weights) = attention_(top, keys, memory, mask);
  const auto attentional = torch::tanh(combine_(torch::cat({top, context}, 1)));
  state.hidden = hidden;
  if (settings_.input_feeding) state.feed = attentional;
  ++state.step;
  return {attentional, weights};
}

StepOutput AttentionSeq2Seq::step(const torch::Tensor& previous_tokens, DecoderState& state) {
  const auto embedded = dropout_(target_embedding_(previous_tokens));
  auto& typed = state_as<AttentionState>(state);
  auto [attentional, weights] = advance(embedded, typed);
  StepOutput output;
  const auto features = dropout_(attentional);
  output.scores = NextTokenScores::logits(typed.output_rows ? typed.output_rows->forward(features) : output_(features));
  output.attention = weights;
  return output;
}

bool AttentionSeq2Seq::score_only(DecoderState& state, const torch::Tensor& columns) {
  state_as<AttentionState>(state).output_rows = output_->output_rows(columns);
  return true;
}

ForwardOutput AttentionSeq2Seq::forward(const torch::Tensor& source, const torch::Tensor& target_input) {
  auto state = make_state(encode(source));
  // Embed all target tokens at once; the recurrence itself must run step by step.
  const auto embedded = dropout_(target_embedding_(target_input));
  std::vector<torch::Tensor> attentional;
  for (int64_t t = 0; t < target_input.size(1); ++t)
    attentional.push_back(advance(embedded.select(1, t), state).first);
  // One big output projection for all steps instead of T small ones.
  return {output_(dropout_(torch::stack(attentional, 1)))};
}

std::vector<LayerComputation> AttentionSeq2Seq::layer_computations() const {
  return {{"Linear layers (bridge, attention, combine, output)", describe_linear_path(linear_path(), device())},
          {"decoder GRU cells", describe_gru_cell_step(linear_path())},
          {"encoder GRU (nn::GRU)", "fp32, LibTorch"}};
}

}  // namespace nmt
