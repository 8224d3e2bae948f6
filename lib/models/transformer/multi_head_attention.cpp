#include "nmt/models/transformer/multi_head_attention.h"

#include <torch/nn/init.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "nmt/base/error.h"
#include "nmt/kernels/dropout.h"
#include "nmt/kernels/attention_products.h"
#include "nmt/kernels/single_query_attention.h"

namespace nmt {

namespace {

// Large enough that exp() underflows to exactly 0 next to any real score, so padded
// and unpadded batches give the same weights; finite, so an all-masked row stays a
// (uniform) distribution instead of NaN.
constexpr double kMaskedScore = -1e9;

// The matmul path's form of memory.rows: keys/values (and a per-row bias) with one row
// per query row. [B] rows select whole rows; [B, Tk] rows gather each position.
KeyValue gather_rows(const KeyValue& memory, torch::Tensor& bias) {
  const auto& rows = memory.rows;
  if (!rows.defined()) return memory;
  if (rows.dim() == 1) {
    if (bias.defined() && bias.size(0) > 1) bias = bias.index_select(0, rows);
    return {memory.keys.index_select(0, rows), memory.values.index_select(0, rows), {}};
  }
  const auto positions = torch::arange(rows.size(1), rows.options()).unsqueeze(0).expand_as(rows);
  auto gather = [&](const torch::Tensor& t) {  // [N, H, Tk, dk] -> [B, H, Tk, dk]
    return t.permute({0, 2, 1, 3}).index({rows, positions}).permute({0, 2, 1, 3});
  };
  return {gather(memory.keys), gather(memory.values), {}};
}

// [B, T, k x H x dk] -> k permuted views [B, H, T, dk] of the projection, no copy.
std::vector<torch::Tensor> head_views(const torch::Tensor& projected, int64_t parts, int64_t heads) {
  const int64_t batch = projected.size(0), length = projected.size(1);
  return projected.view({batch, length, parts, heads, projected.size(2) / (parts * heads)})
      .permute({2, 0, 3, 1, 4})
      .unbind(0);
}

// head_views, whose backward writes the k gradients into the projection's layout with one
// copy each. Autograd's own backward of
// view, permute and unbind stacks them into [k, B, H, T, dk] first and then copies that
// into the layout: two copies of the whole projection (2.6% of a training step). A
// custom function's views cannot be modified in place, which nothing here does.
struct SplitHeadsFunction : torch::autograd::Function<SplitHeadsFunction> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& projected,
                                                int64_t parts, int64_t heads) {
    auto views = head_views(projected, parts, heads);
    const auto& first = views.front();  // [B, H, T, dk]
    ctx->saved_data["sizes"] = std::vector<int64_t>{first.size(0), first.size(2), parts, heads, first.size(3)};
    return views;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto sizes = ctx->saved_data["sizes"].toIntVector();  // B, T, k, H, dk
    const auto defined = std::find_if(grads.begin(), grads.end(), [](const torch::Tensor& g) { return g.defined(); });
    if (defined == grads.end()) return {torch::Tensor(), torch::Tensor(), torch::Tensor()};
    const std::vector<int64_t> flat{sizes[0], sizes[1], sizes[2] * sizes[3] * sizes[4]};
    auto grad = torch::empty(sizes, defined->options());
    for (size_t part = 0; part < grads.size(); ++part) {
      auto slot = grad.select(2, static_cast<int64_t>(part));
      if (grads[part].defined()) slot.copy_(grads[part].permute({0, 2, 1, 3}));
      else slot.zero_();
    }
    return {grad.view(flat), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

std::string describe_attention_kernel(KernelChoice kernel) {
  switch (kernel) {
    case KernelChoice::cpu_fp32:
      return "fp32, the project's kernels (batched products; single-query attention for decoding steps)";
    case KernelChoice::torch_ops: break;
  }
  return "LibTorch matmul and softmax";
}

torch::Tensor padding_bias(const torch::Tensor& mask, torch::ScalarType dtype) {
  const auto batch = mask.size(0);
  const auto length = mask.size(1);
  return mask.logical_not().to(dtype).mul_(kMaskedScore).view({batch, 1, 1, length});
}

torch::Tensor causal_bias(int64_t length, const torch::TensorOptions& options) {
  return torch::full({length, length}, kMaskedScore, options).triu_(1);
}

void init_linear(Linear& linear, int64_t blocks) {
  torch::NoGradGuard no_grad;
  for (auto& block : linear->weight.chunk(blocks, 0)) torch::nn::init::xavier_uniform_(block);
  if (linear->bias.defined()) linear->bias.zero_();
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
  output_ = register_module("output", Linear(d_model, d_model));
  init_linear(output_);
}

std::vector<torch::Tensor> AttentionBase::split_heads(const torch::Tensor& projected,
                                                      int64_t parts) const {
  if (torch::GradMode::is_enabled() && projected.requires_grad())
    return SplitHeadsFunction::apply(projected, parts, heads_);
  return head_views(projected, parts, heads_);
}

bool AttentionBase::takes_single_query(const torch::Tensor& query, const KeyValue& memory,
                                       const torch::Tensor& bias) const {
  const bool needs_gradient = query.requires_grad() || memory.keys.requires_grad() ||
                              memory.values.requires_grad() || (bias.defined() && bias.requires_grad());
  const bool bias_per_memory_row = !bias.defined() || (bias.dim() == 4 && bias.size(1) == 1 && bias.size(2) == 1);
  return !is_training() && query.size(2) == 1 && !needs_gradient && bias_per_memory_row;
}

AttentionOutput AttentionBase::attend(const torch::Tensor& query, const KeyValue& shared,
                                      const torch::Tensor& shared_bias) {
  if (kernel_ == KernelChoice::cpu_fp32 && takes_single_query(query, shared, shared_bias)) {
    auto attended = single_query_attention(query, {shared.keys, shared.values, shared.rows}, shared_bias, scale_);
    return {output_(attended.context), attended.weights};
  }
  return attend_all_rows(query, shared, shared_bias);
}

AttentionOutput AttentionBase::attend_all_rows(const torch::Tensor& query, const KeyValue& shared,
                                               const torch::Tensor& shared_bias) {
  auto bias = shared_bias;
  const auto memory = gather_rows(shared, bias);
  const bool kernels = kernel_ == KernelChoice::cpu_fp32;
  auto scores = kernels ? attention_scores(query, memory.keys)
                        : torch::matmul(query, memory.keys.transpose(-2, -1));  // [B, H, Tq, Tk]
  // One pass for both the 1/sqrt(dk) scale and the mask: bias + scale * scores.
  scores = bias.defined() ? torch::add(bias, scores, scale_) : scores.mul_(scale_);
  auto weights = torch::softmax(scores, -1);
  const bool drop = is_training() && dropout_ > 0;
  const auto kept = drop ? nmt::dropout(weights, dropout_, true, kernel_) : weights;
  auto context = kernels ? attention_context(kept, memory.values) : torch::matmul(kept, memory.values);
  const auto batch = context.size(0);
  const auto length = context.size(2);
  // [B, H, Tq, dk] -> [B, Tq, H, dk] -> [B, Tq, D]: a copy after matmul, a view after
  // attention_context (whose memory is [B, Tq, H, dk] already).
  auto merged = context.transpose(1, 2).reshape({batch, length, d_model_});
  return {output_(merged), weights};
}

// --- SelfAttention ----------------------------------------------------------

SelfAttentionImpl::SelfAttentionImpl(int64_t d_model, int64_t heads, double dropout)
    : AttentionBase(d_model, heads, dropout) {
  qkv_ = register_module("qkv", Linear(d_model, 3 * d_model));
  init_linear(qkv_, 3);
}

AttentionOutput SelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& bias,
                                           KeyValueCache* cache) {
  return forward(x, x, bias, cache);
}

std::vector<torch::Tensor> SelfAttentionImpl::project(const torch::Tensor& queries_from,
                                                      const torch::Tensor& keys_values_from) {
  if (queries_from.is_same(keys_values_from)) return split_heads(qkv_(queries_from), 3);
  if (!queries_from.sizes().equals(keys_values_from.sizes()))
    throw Error("transformer: self-attention's queries and keys come from inputs of different shapes");
  // Both inputs through the one fused projection, stacked on the batch axis: the weight stays
  // in whatever form its Linear path holds (int8, bf16, packed), at the price of computing
  // the unused third of each half.
  const auto batch = queries_from.size(0);
  const auto both = split_heads(qkv_(torch::cat({queries_from, keys_values_from}, 0)), 3);
  return {both[0].narrow(0, 0, batch), both[1].narrow(0, batch, batch), both[2].narrow(0, batch, batch)};
}

AttentionOutput SelfAttentionImpl::forward(const torch::Tensor& queries_from, const torch::Tensor& keys_values_from,
                                           const torch::Tensor& bias, KeyValueCache* cache) {
  auto parts = project(queries_from, keys_values_from);
  if (cache == nullptr) return attend(parts[0], {parts[1], parts[2], {}}, bias);
  const auto& x = queries_from;
  const auto rows = x.size(0), length = cache->length, end = length + x.size(1);
  if (cache->keys.size(0) < rows || cache->keys.size(2) < end || cache->rows.size(1) != end)
    throw Error("transformer: self-attention cache without room for the step");
  cache->keys.narrow(0, 0, rows).narrow(2, length, x.size(1)).copy_(parts[1]);
  cache->values.narrow(0, 0, rows).narrow(2, length, x.size(1)).copy_(parts[2]);
  const KeyValue current{cache->keys.narrow(2, 0, end), cache->values.narrow(2, 0, end), cache->rows};
  return attend(parts[0], current, bias);
}

// --- CrossAttention ---------------------------------------------------------

CrossAttentionImpl::CrossAttentionImpl(int64_t d_model, int64_t heads, double dropout)
    : AttentionBase(d_model, heads, dropout) {
  query_ = register_module("query", Linear(d_model, d_model));
  key_value_ = register_module("key_value", Linear(d_model, 2 * d_model));
  init_linear(query_);
  init_linear(key_value_, 2);
}

KeyValue CrossAttentionImpl::project_memory(const torch::Tensor& memory) {
  // matmul would copy these permuted views on every call anyway; copying once here
  // lets every decoding step use them in place.
  auto parts = split_heads(key_value_(memory), 2);
  return {parts[0].contiguous(), parts[1].contiguous(), {}};
}

AttentionOutput CrossAttentionImpl::forward(const torch::Tensor& x, const KeyValue& memory,
                                            const torch::Tensor& bias) {
  return attend(split_heads(query_(x), 1)[0], memory, bias);
}

}  // namespace nmt
