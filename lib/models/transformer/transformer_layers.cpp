#include "nmt/models/transformer/transformer_layers.h"

#include <torch/torch.h>

#include <cmath>

#include "nmt/base/error.h"
#include "nmt/kernels/dropout.h"

namespace nmt {

namespace {

torch::nn::LayerNorm layer_norm(int64_t d_model) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model}));
}

}  // namespace

bool uses_pre_norm(const TransformerConfig& config) {
  if (config.norm == "pre") return true;
  if (config.norm == "post") return false;
  throw Error("transformer: norm must be \"pre\" or \"post\", got \"" + config.norm + "\"");
}

torch::Tensor sinusoidal_positions(int64_t positions, int64_t dim) {
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

FeedForwardImpl::FeedForwardImpl(int64_t d_model, int64_t inner_dim) {
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
  const auto hidden = product.requires_grad() ? torch::relu(product) : product.relu_();
  return outer_(hidden).to(x.scalar_type());
}

// --- ResidualBlock ----------------------------------------------------------

torch::Tensor ResidualBlock::drop(const torch::Tensor& x, bool training) const {
  return nmt::dropout(x, dropout_, training, dropout_kernel_);
}

// --- EncoderLayer -----------------------------------------------------------

EncoderLayerImpl::EncoderLayerImpl(const TransformerConfig& config, double dropout)
    : residual_(uses_pre_norm(config), dropout) {
  self_attention_ = register_module(
      "self_attention", SelfAttention(config.d_model, config.heads, config.attention_dropout));
  feed_forward_ = register_module("feed_forward", FeedForward(config.d_model, config.ffn_dim));
  attention_norm_ = register_module("attention_norm", layer_norm(config.d_model));
  feed_forward_norm_ = register_module("feed_forward_norm", layer_norm(config.d_model));
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& source_bias,
                                        torch::Tensor* weights) {
  const bool training = is_training();
  auto h = residual_.apply(x, attention_norm_, training, [&](const torch::Tensor& input) {
    auto attended = self_attention_(input, source_bias);
    if (weights != nullptr) *weights = attended.weights;
    return attended.output;
  });
  return residual_.apply(h, feed_forward_norm_, training,
                         [&](const torch::Tensor& input) { return feed_forward_(input); });
}

// --- DecoderLayer -----------------------------------------------------------

DecoderLayerImpl::DecoderLayerImpl(const TransformerConfig& config, double dropout)
    : residual_(uses_pre_norm(config), dropout) {
  self_attention_ = register_module(
      "self_attention", SelfAttention(config.d_model, config.heads, config.attention_dropout));
  cross_attention_ = register_module(
      "cross_attention", CrossAttention(config.d_model, config.heads, config.attention_dropout));
  feed_forward_ = register_module("feed_forward", FeedForward(config.d_model, config.ffn_dim));
  self_attention_norm_ = register_module("self_attention_norm", layer_norm(config.d_model));
  cross_attention_norm_ = register_module("cross_attention_norm", layer_norm(config.d_model));
  feed_forward_norm_ = register_module("feed_forward_norm", layer_norm(config.d_model));
}

KeyValue DecoderLayerImpl::project_memory(const torch::Tensor& memory) {
  return cross_attention_->project_memory(memory);
}

DecoderLayerOutput DecoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& self_bias,
                                             const KeyValue& memory,
                                             const torch::Tensor& memory_bias,
                                             KeyValueCache* cache) {
  const bool training = is_training();
  torch::Tensor self_weights;
  auto h = residual_.apply(x, self_attention_norm_, training, [&](const torch::Tensor& input) {
    auto attended = self_attention_->forward(input, self_bias, cache);
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
