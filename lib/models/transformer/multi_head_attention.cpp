#include "nmt/models/transformer/multi_head_attention.h"

#include <torch/nn/init.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "nmt/base/error.h"
#include "single_query_attention.h"

namespace nmt {

namespace {

// Large enough that exp() underflows to exactly 0 next to any real score, so padded
// and unpadded batches give the same weights; finite, so an all-masked row stays a
// (uniform) distribution instead of NaN.
constexpr double kMaskedScore = -1e9;

// Positions a full cache grows by. Beam search copies whole buffers when it reorders
// rows, so spare room costs a copy every step: a small chunk, not the maximum length.
constexpr int64_t kCacheChunk = 8;

// `buffer` with room for at least `needed` positions (dim 2), its first `length` kept.
// A buffer another tensor shares (a copied DecoderState) is copied, never written.
torch::Tensor writable(torch::Tensor buffer, int64_t length, int64_t needed) {
  const bool unshared = buffer.use_count() == 1 && buffer.storage().use_count() == 1;
  if (buffer.size(2) >= needed && unshared) return buffer;
  auto sizes = buffer.sizes().vec();
  sizes[2] = std::max(sizes[2], (needed + kCacheChunk - 1) / kCacheChunk * kCacheChunk);
  auto grown = torch::empty(sizes, buffer.options());
  grown.narrow(2, 0, length).copy_(buffer.narrow(2, 0, length));
  return grown;
}

// Writes `part` [B, H, T, dk] after the cache's filled positions; returns views of the
// filled positions, the new ones included.
torch::Tensor write_cache(torch::Tensor& buffer, int64_t length, const torch::Tensor& part) {
  const auto end = length + part.size(2);
  buffer = writable(std::move(buffer), length, end);
  buffer.narrow(2, length, part.size(2)).copy_(part);
  return buffer.narrow(2, 0, end);
}

}  // namespace

torch::Tensor padding_bias(const torch::Tensor& mask, torch::ScalarType dtype) {
  const auto batch = mask.size(0);
  const auto length = mask.size(1);
  return mask.logical_not().to(dtype).mul_(kMaskedScore).view({batch, 1, 1, length});
}

torch::Tensor causal_bias(int64_t length, const torch::TensorOptions& options) {
  return torch::full({length, length}, kMaskedScore, options).triu_(1);
}

void init_linear(torch::nn::Linear& linear, int64_t blocks) {
  torch::NoGradGuard no_grad;
  for (auto& block : linear->weight.chunk(blocks, 0)) torch::nn::init::xavier_uniform_(block);
  if (linear->bias.defined()) linear->bias.zero_();
}

torch::Tensor apply_linear(torch::nn::Linear& linear, const torch::Tensor& x) {
  if (x.dim() == 2) return linear(x);
  auto sizes = x.sizes().vec();
  auto flat = linear(x.reshape({-1, sizes.back()}));
  sizes.back() = flat.size(1);
  return flat.view(sizes);
}

// --- AttentionBase ----------------------------------------------------------

AttentionBase::AttentionBase(int64_t d_model, int64_t heads, double dropout)
    : d_model_(d_model), heads_(heads), head_dim_(heads > 0 ? d_model / heads : 0),
      dropout_(dropout) {
  if (heads <= 0 || d_model % heads != 0) {
    throw Error("transformer: d_model (" + std::to_string(d_model) +
                ") must be a positive multiple of heads (" + std::to_string(heads) + ")");
  }
  scale_ = 1.0 / std::sqrt(static_cast<double>(head_dim_));
  output_ = register_module("output", torch::nn::Linear(d_model, d_model));
  init_linear(output_);
}

std::vector<torch::Tensor> AttentionBase::split_heads(const torch::Tensor& projected,
                                                      int64_t parts) const {
  const auto batch = projected.size(0);
  const auto length = projected.size(1);
  // [B, T, k*D] -> [B, T, k, H, dk] -> [k, B, H, T, dk]: a permuted view, no copy.
  return projected.view({batch, length, parts, heads_, head_dim_})
      .permute({2, 0, 3, 1, 4})
      .unbind(0);
}

AttentionOutput AttentionBase::attend(const torch::Tensor& query, const KeyValue& memory,
                                      const torch::Tensor& bias) {
  if (!is_training() && single_query_applies(query, memory, bias)) {
    auto attended = single_query_attention(query, memory, bias, scale_);
    return {apply_linear(output_, attended.context), attended.weights};
  }
  auto scores = torch::matmul(query, memory.keys.transpose(-2, -1));  // [B, H, Tq, Tk]
  // One pass for both the 1/sqrt(dk) scale and the mask: bias + scale * scores.
  scores = bias.defined() ? torch::add(bias, scores, scale_) : scores.mul_(scale_);
  auto weights = torch::softmax(scores, -1);
  const bool drop = is_training() && dropout_ > 0;
  auto context = torch::matmul(drop ? torch::dropout(weights, dropout_, true) : weights,
                               memory.values);
  const auto batch = context.size(0);
  const auto length = context.size(2);
  // [B, H, Tq, dk] -> [B, Tq, H, dk] -> [B, Tq, D]: the one copy merging heads needs.
  auto merged = context.transpose(1, 2).reshape({batch, length, d_model_});
  return {apply_linear(output_, merged), weights};
}

// --- SelfAttention ----------------------------------------------------------

SelfAttentionImpl::SelfAttentionImpl(int64_t d_model, int64_t heads, double dropout)
    : AttentionBase(d_model, heads, dropout) {
  qkv_ = register_module("qkv", torch::nn::Linear(d_model, 3 * d_model));
  init_linear(qkv_, 3);
}

AttentionOutput SelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& bias,
                                           KeyValueCache* cache) {
  auto parts = split_heads(apply_linear(qkv_, x), 3);
  KeyValue current{parts[1], parts[2]};
  if (cache != nullptr) {
    current.keys = write_cache(cache->keys, cache->length, current.keys);
    current.values = write_cache(cache->values, cache->length, current.values);
    cache->length += x.size(1);
  }
  return attend(parts[0], current, bias);
}

// --- CrossAttention ---------------------------------------------------------

CrossAttentionImpl::CrossAttentionImpl(int64_t d_model, int64_t heads, double dropout)
    : AttentionBase(d_model, heads, dropout) {
  query_ = register_module("query", torch::nn::Linear(d_model, d_model));
  key_value_ = register_module("key_value", torch::nn::Linear(d_model, 2 * d_model));
  init_linear(query_);
  init_linear(key_value_, 2);
}

KeyValue CrossAttentionImpl::project_memory(const torch::Tensor& memory) {
  // matmul would copy these permuted views on every call anyway; copying once here
  // lets every decoding step use them in place.
  auto parts = split_heads(apply_linear(key_value_, memory), 2);
  return {parts[0].contiguous(), parts[1].contiguous()};
}

AttentionOutput CrossAttentionImpl::forward(const torch::Tensor& x, const KeyValue& memory,
                                            const torch::Tensor& bias) {
  return attend(split_heads(apply_linear(query_, x), 1)[0], memory, bias);
}

}  // namespace nmt
