#include "nmt/models/transformer/transformer_layers.h"

#include <torch/torch.h>

#include <cmath>

#include "nmt/base/error.h"
#include "nmt/kernels/dropout.h"

namespace nmt {

NormPlacement norm_placement(const TransformerConfig& config) {
  if (config.norm == "pre") return NormPlacement::pre;
  if (config.norm == "post") return NormPlacement::post;
  if (config.norm == "pre_query") return NormPlacement::pre_query;
  throw Error("transformer: norm must be \"pre\", \"post\" or \"pre_query\", got \"" + config.norm + "\"");
}

bool uses_pre_norm(const TransformerConfig& config) { return norm_placement(config) != NormPlacement::post; }

PositionLayout position_layout(const TransformerConfig& config) {
  if (config.positions == "interleaved") return PositionLayout::interleaved;
  if (config.positions == "concatenated") {
    if (config.d_model % 2 != 0 || config.d_model < 4)
      throw Error("transformer: positions \"concatenated\" needs an even d_model of at least 4, got " +
                  std::to_string(config.d_model));
    return PositionLayout::concatenated;
  }
  throw Error("transformer: positions must be \"interleaved\" or \"concatenated\", got \"" + config.positions + "\"");
}

bool decoder_starts_from_zeros(const TransformerConfig& config) {
  if (config.decoder_start == "zeros") return true;
  if (config.decoder_start == "bos") return false;
  throw Error("transformer: decoder_start must be \"bos\" or \"zeros\", got \"" + config.decoder_start + "\"");
}

DecoderAutoregression decoder_autoregression(const TransformerConfig& config) {
  if (config.decoder_autoreg == "self_attention") return DecoderAutoregression::self_attention;
  if (config.decoder_autoreg == "ssru") return DecoderAutoregression::ssru;
  throw Error("transformer: decoder_autoreg must be \"self_attention\" or \"ssru\", got \"" + config.decoder_autoreg + "\"");
}

FeedForwardActivation feed_forward_activation(const TransformerConfig& config) {
  if (config.ffn_activation == "relu") return FeedForwardActivation::relu;
  if (config.ffn_activation == "swish") return FeedForwardActivation::swish;
  throw Error("transformer: ffn_activation must be \"relu\" or \"swish\", got \"" + config.ffn_activation + "\"");
}

torch::nn::LayerNorm transformer_layer_norm(const TransformerConfig& config) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.d_model}).eps(config.layer_norm_epsilon));
}

namespace {

// Marian's sinusoidalPositionEmbeddings (src/graph/node_initializers.cpp), in float as there.
torch::Tensor concatenated_positions(int64_t positions, int64_t dim) {
  const int64_t timescales = dim / 2;
  const float increment = std::log(10000.f) / (static_cast<float>(timescales) - 1.f);
  auto table = torch::empty({positions, dim}, torch::kFloat32);
  auto* row = table.data_ptr<float>();
  for (int64_t p = 0; p < positions; ++p, row += dim) {
    for (int64_t i = 0; i < timescales; ++i) {
      const float angle = static_cast<float>(p) * std::exp(static_cast<float>(i) * -increment);
      row[i] = std::sin(angle);
      row[timescales + i] = std::cos(angle);
    }
  }
  return table;
}

}  // namespace

torch::Tensor sinusoidal_positions(int64_t positions, int64_t dim, PositionLayout layout) {
  if (layout == PositionLayout::concatenated) return concatenated_positions(positions, dim);
  // Built in double so long tables stay accurate, stored as float.
  auto options = torch::TensorOptions().dtype(torch::kFloat64);
  auto position = torch::arange(positions, options).unsqueeze(1);           // [P, 1]
  auto frequency = torch::exp(torch::arange(0, dim, 2, options) *           // [ceil(D/2)]
                              (-std::log(10000.0) / static_cast<double>(dim)));
  auto angles = position * frequency;                                       // [P, ceil(D/2)]
  auto table = torch::empty({positions, dim}, options);
  using torch::indexing::None;
  using torch::indexing::Slice;
  table.index_put_({Slice(), Slice(0, None, 2)}, torch::sin(angles));
  table.index_put_({Slice(), Slice(1, None, 2)}, torch::cos(angles).narrow(1, 0, dim / 2));
  return table.to(torch::kFloat32);
}

// --- FeedForward ------------------------------------------------------------

FeedForwardImpl::FeedForwardImpl(int64_t d_model, int64_t inner_dim, FeedForwardActivation activation)
    : activation_(activation) {
  inner_ = register_module("inner", Linear(d_model, inner_dim));
  outer_ = register_module("outer", Linear(inner_dim, d_model));
  init_linear(inner_);
  init_linear(outer_);
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  // On a bf16 path the widest activation stays bf16 between the two products: no casts
  // of it (each product returns its input's dtype).
  const auto input = computes_in_bf16(inner_->path()) ? x.to(torch::kBFloat16) : x;
  // Without gradients relu_ in place spares a [B, T, F] buffer. With them, out of place:
  // the product's result is a view of its 2-D GEMM output, and an in-place op on a view
  // makes autograd's backward copy the whole gradient through the base (CopySlices, 1.5%
  // of a training step). relu's backward keeps only its result either way.
  const auto product = inner_(input);
  torch::Tensor hidden = product;  // a handle: in place below writes the product's storage
  if (activation_ == FeedForwardActivation::swish)
    hidden = product.requires_grad() ? torch::silu(product) : torch::silu_(hidden);
  else
    hidden = product.requires_grad() ? torch::relu(product) : product.relu_();
  return outer_(hidden).to(x.scalar_type());
}

// --- ResidualBlock ----------------------------------------------------------

torch::Tensor ResidualBlock::drop(const torch::Tensor& x, bool training) const {
  return nmt::dropout(x, dropout_, training, dropout_kernel_);
}

// --- EncoderLayer -----------------------------------------------------------

EncoderLayerImpl::EncoderLayerImpl(const TransformerConfig& config, double dropout)
    : residual_(norm_placement(config), dropout) {
  self_attention_ = register_module(
      "self_attention", SelfAttention(config.d_model, config.heads, config.attention_dropout));
  feed_forward_ = register_module("feed_forward", FeedForward(config.d_model, config.ffn_dim, feed_forward_activation(config)));
  attention_norm_ = register_module("attention_norm", transformer_layer_norm(config));
  feed_forward_norm_ = register_module("feed_forward_norm", transformer_layer_norm(config));
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& source_bias,
                                        torch::Tensor* weights) {
  const bool training = is_training();
  auto h = residual_.apply_self_attention(x, attention_norm_, training, [&](const torch::Tensor& queries_from,
                                                                           const torch::Tensor& keys_values_from) {
    auto attended = self_attention_->forward(queries_from, keys_values_from, source_bias);
    if (weights != nullptr) *weights = attended.weights;
    return attended.output;
  });
  return residual_.apply(h, feed_forward_norm_, training,
                         [&](const torch::Tensor& input) { return feed_forward_(input); });
}

// --- DecoderLayer -----------------------------------------------------------

DecoderLayerImpl::DecoderLayerImpl(const TransformerConfig& config, double dropout)
    : residual_(norm_placement(config), dropout) {
  const bool recurrent = decoder_autoregression(config) == DecoderAutoregression::ssru;
  if (recurrent)
    ssru_ = register_module("ssru", SSRU(config.d_model));
  else
    self_attention_ = register_module(
        "self_attention", SelfAttention(config.d_model, config.heads, config.attention_dropout));
  cross_attention_ = register_module(
      "cross_attention", CrossAttention(config.d_model, config.heads, config.attention_dropout));
  feed_forward_ = register_module("feed_forward", FeedForward(config.d_model, config.ffn_dim, feed_forward_activation(config)));
  self_attention_norm_ = register_module(recurrent ? "ssru_norm" : "self_attention_norm", transformer_layer_norm(config));
  cross_attention_norm_ = register_module("cross_attention_norm", transformer_layer_norm(config));
  feed_forward_norm_ = register_module("feed_forward_norm", transformer_layer_norm(config));
}

KeyValue DecoderLayerImpl::project_memory(const torch::Tensor& memory) {
  return cross_attention_->project_memory(memory);
}

DecoderLayerOutput DecoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& self_bias,
                                             const KeyValue& memory,
                                             const torch::Tensor& memory_bias,
                                             DecoderLayerStepState step) {
  const bool training = is_training();
  torch::Tensor self_weights;
  auto h = residual_.apply_self_attention(x, self_attention_norm_, training, [&](const torch::Tensor& queries_from,
                                                                                const torch::Tensor& keys_values_from) {
    if (!ssru_.is_empty()) return ssru_->forward(queries_from, step.recurrent_cell);
    auto attended = self_attention_->forward(queries_from, keys_values_from, self_bias, step.self_attention);
    self_weights = attended.weights;
    return attended.output;
  });
  torch::Tensor cross_weights;
  h = residual_.apply(h, cross_attention_norm_, training, [&](const torch::Tensor& input) {
    auto attended = cross_attention_(input, memory, memory_bias);
    cross_weights = attended.weights;
    return attended.output;
  });
  h = residual_.apply(h, feed_forward_norm_, training,
                      [&](const torch::Tensor& input) { return feed_forward_(input); });
  return {h, cross_weights, self_weights};
}

}  // namespace nmt
