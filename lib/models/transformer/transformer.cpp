#include "nmt/models/transformer/transformer.h"

#include <torch/nn/init.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "nmt/base/error.h"
#include "nmt/kernels/dropout.h"
#include "nmt/models/transformer/transformer_config.h"

namespace nmt {

namespace {

constexpr int64_t kPadId = 0;

void require(bool condition, const std::string& message) {
  if (!condition) throw Error("transformer: " + message);
}

// model.transformer.* and what depends on it; vocabulary sizes only once they are known.
void check_settings(const ModelConfig& config) {
  const auto& settings = config.section<TransformerConfig>();
  require(settings.d_model > 0 && settings.ffn_dim > 0, "d_model and ffn_dim must be positive");
  require(settings.heads > 0 && settings.d_model % settings.heads == 0,
          "d_model must be a multiple of heads");
  require(settings.encoder_layers > 0 && settings.decoder_layers > 0,
          "encoder_layers and decoder_layers must be positive");
  require(settings.max_positions > 0, "max_positions must be positive");
  require(settings.attention_dropout >= 0 && settings.attention_dropout < 1,
          "attention_dropout must be in [0, 1)");
  const bool vocab_known = config.source_vocab > 0 && config.target_vocab > 0;
  require(!vocab_known || !settings.share_embeddings || config.source_vocab == config.target_vocab,
          "share_embeddings needs equal source and target vocabularies (got " +
              std::to_string(config.source_vocab) + " and " +
              std::to_string(config.target_vocab) + ")");
  uses_pre_norm(settings);  // each throws for an unknown name
  position_layout(settings);
  decoder_starts_from_zeros(settings);
  feed_forward_activation(settings);
  decoder_autoregression(settings);
}

// N(0, d_model^-0.5): after the sqrt(d_model) scaling, embeddings have unit variance,
// comparable to the positional encoding they are added to.
torch::nn::Embedding make_embedding(int64_t vocab, int64_t d_model) {
  torch::nn::Embedding embedding(torch::nn::EmbeddingOptions(vocab, d_model).padding_idx(kPadId));
  torch::NoGradGuard no_grad;
  embedding->weight.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(d_model)));
  embedding->weight[kPadId].zero_();
  return embedding;
}

}  // namespace

ModelFamily transformer_family() {
  return {"transformer", "Transformer encoder-decoder (Vaswani et al. 2017); settings in model.transformer",
          "transformer", check_settings, [](const ModelConfig& config) { return std::make_shared<TransformerModel>(config); }};
}

TransformerModel::TransformerModel(const ModelConfig& config)
    : config_(config), settings_(config.section<TransformerConfig>()) {
  require(config.source_vocab > 0 && config.target_vocab > 0, "vocabulary sizes must be set");
  check_settings(config_);
  // StepOutput::attention comes from the penultimate decoder layer: alignment studies
  // (Garg et al. 2019, "Jointly Learning to Align and Translate with Transformer
  // Models") find it aligns best, the last layer being specialised for prediction.
  alignment_layer_ = settings_.decoder_layers >= 2 ? settings_.decoder_layers - 2 : 0;
  build_embeddings();
  // A buffer, not a parameter: fixed, but saved with the model and moved by .to().
  positions_ = register_buffer("positions",
                               sinusoidal_positions(settings_.max_positions, settings_.d_model,
                                                    position_layout(settings_)));
  decoder_starts_from_zeros_ = decoder_starts_from_zeros(settings_);
  recurrent_decoder_ = decoder_autoregression(settings_) == DecoderAutoregression::ssru;
  build_stacks();
}

void TransformerModel::build_embeddings() {
  if (settings_.share_embeddings) {
    // Registered once, so the optimiser sees (and updates) the matrix once.
    source_embedding_ =
        register_module("embedding", make_embedding(config_.source_vocab, settings_.d_model));
    target_embedding_ = source_embedding_;
  } else {
    source_embedding_ = register_module("source_embedding",
                                        make_embedding(config_.source_vocab, settings_.d_model));
    target_embedding_ = register_module("target_embedding",
                                        make_embedding(config_.target_vocab, settings_.d_model));
  }
  if (!settings_.tie_output) {
    auto weight = torch::empty({config_.target_vocab, settings_.d_model});
    torch::nn::init::xavier_uniform_(weight);
    output_weight_ = register_parameter("output_weight", weight);
  }
  if (settings_.output_bias)
    output_bias_ = register_parameter("output_bias", torch::zeros({config_.target_vocab}));
  output_projection_ = Linear(output_weight(), output_bias_);
}

void TransformerModel::build_stacks() {
  encoder_ = register_module("encoder", torch::nn::ModuleList());
  decoder_ = register_module("decoder", torch::nn::ModuleList());
  for (int64_t i = 0; i < settings_.encoder_layers; ++i) {
    encoder_layers_.emplace_back(settings_, config_.dropout);
    encoder_->push_back(encoder_layers_.back());
  }
  for (size_t i = 0; i < static_cast<size_t>(settings_.decoder_layers); ++i) {
    decoder_layers_.emplace_back(settings_, config_.dropout);
    decoder_->push_back(decoder_layers_.back());
  }
  if (uses_pre_norm(settings_)) {
    encoder_norm_ = register_module("encoder_norm", transformer_layer_norm(settings_));
    decoder_norm_ = register_module("decoder_norm", transformer_layer_norm(settings_));
  }
}

torch::Tensor TransformerModel::output_weight() const {
  return settings_.tie_output ? target_embedding_->weight : output_weight_;
}

torch::Tensor TransformerModel::embed(const torch::nn::Embedding& embedding, const torch::Tensor& ids,
                                      int64_t offset, bool zero_first_position) {
  const auto length = ids.size(1);
  require(offset + length <= settings_.max_positions,
          "sequence of " + std::to_string(offset + length) + " positions exceeds max_positions " +
              std::to_string(settings_.max_positions));
  auto x = torch::embedding(embedding->weight, ids, kPadId)
               .mul_(std::sqrt(static_cast<double>(settings_.d_model)));
  if (zero_first_position && offset == 0) x.select(1, 0).zero_();
  x.add_(positions_.narrow(0, offset, length));  // [T, D] broadcast over B
  return nmt::dropout(x, config_.dropout, is_training(), kernels_);
}

torch::Tensor TransformerModel::embed_target(const torch::Tensor& ids, int64_t offset) {
  // Position 0 holds <s>; a zero-start decoder reads a zero embedding there instead, plus
  // the position's sinusoid: Marian's first decoder input.
  return embed(target_embedding_, ids, offset, decoder_starts_from_zeros_);
}

torch::Tensor TransformerModel::project_output(const torch::Tensor& x) {
  return output_projection_(decoder_norm_.is_empty() ? x : decoder_norm_(x));
}

torch::Tensor TransformerModel::project_output(const torch::Tensor& x, const std::shared_ptr<LinearImpl>& rows) {
  if (!rows) return project_output(x);
  return rows->forward(decoder_norm_.is_empty() ? x : decoder_norm_(x));
}

std::vector<LinearImpl*> TransformerModel::linear_layers() {
  auto layers = Seq2SeqModel::linear_layers();
  layers.push_back(output_projection_.get());
  return layers;
}

void TransformerModel::after_weights_converted() {
  // The output projection computes with its converted copy; a tied embedding is still
  // looked up in fp32, an untied fp32 weight is read by nothing and goes.
  if (settings_.tie_output) return;
  parameters_["output_weight"] = torch::Tensor();
  output_weight_ = torch::Tensor();
}

void TransformerModel::use_linear_path(LinearPath path) {
  Seq2SeqModel::use_linear_path(path);
  decide_kernels();
}

void TransformerModel::to(torch::Device device, torch::Dtype dtype, bool non_blocking) {
  Seq2SeqModel::to(device, dtype, non_blocking);
  decide_kernels();
}

void TransformerModel::to(torch::Dtype dtype, bool non_blocking) {
  Seq2SeqModel::to(dtype, non_blocking);
  decide_kernels();
}

void TransformerModel::to(torch::Device device, bool non_blocking) {
  Seq2SeqModel::to(device, non_blocking);
  decide_kernels();
}

void TransformerModel::decide_kernels() {
  kernels_ = kernel_choice_for(positions_.device(), positions_.scalar_type());
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* attention = dynamic_cast<AttentionBase*>(module.get())) attention->use_kernels(kernels_);
  for (auto& layer : encoder_layers_) layer->use_dropout_kernel(kernels_);
  for (auto& layer : decoder_layers_) layer->use_dropout_kernel(kernels_);
}

std::vector<LayerComputation> TransformerModel::layer_computations() const {
  const auto path = describe_linear_path(linear_path(), device());
  auto output = path;
  if (settings_.tie_output)
    output += converts_weights(linear_path()) ? "; a converted copy of the tied target embedding" : "; tied to the target embedding";
  std::vector<LayerComputation> computations{
      {"attention projections", path},
      {"feed-forward", computes_in_bf16(linear_path()) ? path + "; the hidden layer stays bf16" : path},
      {"output projection", output},
      {"attention scores and context", describe_attention_kernel(kernels_)},
      {"dropout", describe_kernel_choice(kernels_)},
      {"embeddings, layer norms", "fp32, LibTorch"}};
  if (recurrent_decoder_) {
    computations.insert(computations.begin() + 1, {"the decoder's SSRU products", path});
    computations.back().layers += ", the SSRU's gates";
  }
  return computations;
}

EncoderOutput TransformerModel::encode(const torch::Tensor& source) {
  EncoderOutput encoded;
  encoded.source_mask = padding_mask(source);
  auto bias = padding_bias(encoded.source_mask, positions_.scalar_type());
  auto x = embed(source_embedding_, source, 0);
  for (auto& layer : encoder_layers_) x = layer->forward(x, bias);
  encoded.memory = encoder_norm_.is_empty() ? x : encoder_norm_(x);
  encoded.source_bias = bias;
  return encoded;
}

void TransformerState::reorder(const torch::Tensor& index) {
  self_attention.reorder(index);
  for (auto& cell : recurrent_cells)
    if (cell.defined()) cell = cell.index_select(0, index);
}

void TransformerState::select(const torch::Tensor& index) {
  reorder(index);
  sentence_rows = sentence_rows.defined() ? sentence_rows.index_select(0, index) : index.clone();
}

DecoderStatePtr TransformerModel::initial_state(const EncoderOutput& encoded) {
  auto state = std::make_unique<TransformerState>();
  const auto& memory = encoded.memory;
  // No copy of `memory` itself: step() only reads its projections.
  state->source_bias = encoded.source_bias.defined() ? encoded.source_bias
                                                     : padding_bias(encoded.source_mask, memory.scalar_type());
  for (auto& layer : decoder_layers_) state->memory.push_back(layer->project_memory(memory));
  // An SSRU decoder keeps no caches (a table with no layers), but a cell per layer, zeros
  // until its first step.
  state->self_attention = SelfAttentionCaches(
      recurrent_decoder_ ? 0 : settings_.decoder_layers, memory.size(0), settings_.heads,
      settings_.d_model / settings_.heads, memory.options());
  if (recurrent_decoder_) state->recurrent_cells.resize(decoder_layers_.size());
  return state;
}

StepOutput TransformerModel::step(const torch::Tensor& previous_tokens, DecoderState& base) {
  auto& state = state_as<TransformerState>(base);
  auto x = embed_target(previous_tokens.unsqueeze(1), state.step);  // [B, 1, D]
  StepOutput out;
  if (state.want_attention) out.layer_attention.reserve(decoder_layers_.size());
  {
    // Back in the state at the '}'. An SSRU decoder has none to open: its cells are its state.
    std::optional<SelfAttentionCaches::Lent> caches;
    if (!recurrent_decoder_) caches.emplace(state.self_attention.open(x.size(0), state.step));
    // The SSRU cells move on in a copy, kept only once every layer has stepped: a step that
    // throws leaves the state as it was.
    auto cells = state.recurrent_cells;
    for (size_t i = 0; i < decoder_layers_.size(); ++i) {
      const KeyValue memory{state.memory[i].keys, state.memory[i].values, state.sentence_rows};
      // No self-attention mask: attention reads only the filled positions <= the current one.
      const auto step = recurrent_decoder_ ? DecoderLayerStepState{nullptr, &cells[i]}
                                           : DecoderLayerStepState{&(*caches)[i], nullptr};
      auto result = decoder_layers_[i]->forward(x, torch::Tensor(), memory, state.source_bias, step);
      x = result.output;
      if (state.want_attention) out.layer_attention.push_back(result.cross_weights.squeeze(2));  // [B, H, S]
    }
    state.recurrent_cells = std::move(cells);
  }
  out.scores = NextTokenScores::logits(project_output(x, state.output_rows).squeeze(1));
  if (state.want_attention) out.attention = out.layer_attention[alignment_layer_].mean(1);  // [B, S]
  ++state.step;
  return out;
}

bool TransformerModel::score_only(DecoderState& base, const torch::Tensor& columns) {
  state_as<TransformerState>(base).output_rows = output_projection_->output_rows(columns);
  return true;
}

torch::Tensor TransformerModel::decoder_states(const torch::Tensor& source, const torch::Tensor& target_input) {
  auto encoded = encode(source);
  const auto& memory_bias = encoded.source_bias;
  // Built once per batch, shared by every layer; [T, T] broadcasts over batch and heads.
  auto self_bias = causal_bias(target_input.size(1), encoded.memory.options());
  auto x = embed_target(target_input, 0);
  for (auto& layer : decoder_layers_) {
    x = layer->forward(x, self_bias, layer->project_memory(encoded.memory), memory_bias).output;
  }
  return x;
}

ForwardOutput TransformerModel::forward(const torch::Tensor& source, const torch::Tensor& target_input) {
  return {project_output(decoder_states(source, target_input))};
}

torch::Tensor TransformerModel::forward_at(const torch::Tensor& source, const torch::Tensor& target_input,
                                           const torch::Tensor& positions) {
  const auto states = decoder_states(source, target_input);
  return project_output(states.reshape({-1, states.size(-1)}).index_select(0, positions));
}

SelfAttentionWeights TransformerModel::self_attention(const torch::Tensor& source,
                                                      const torch::Tensor& target_input) {
  SelfAttentionWeights weights;
  const auto mask = padding_mask(source);
  const auto source_bias = padding_bias(mask, positions_.scalar_type());
  auto x = embed(source_embedding_, source, 0);
  for (auto& layer : encoder_layers_) {
    weights.encoder.emplace_back();
    x = layer->forward(x, source_bias, &weights.encoder.back());
  }
  const auto memory = encoder_norm_.is_empty() ? x : encoder_norm_(x);
  auto self_bias = causal_bias(target_input.size(1), memory.options());
  auto y = embed_target(target_input, 0);
  for (auto& layer : decoder_layers_) {
    auto result = layer->forward(y, self_bias, layer->project_memory(memory), source_bias);
    y = result.output;
    if (result.self_weights.defined()) weights.decoder.push_back(result.self_weights);  // none with SSRU
  }
  return weights;
}

}  // namespace nmt
