#pragma once
// Multi-head scaled dot-product attention (Vaswani et al. 2017, sec. 3.2.2) in the two
// forms the Transformer decoder needs:
//  - SelfAttention: one fused Q/K/V projection (one GEMM instead of three), optionally
//    writing into an incremental key/value cache so decoding never re-runs the prefix;
//  - CrossAttention: a fused K/V projection of the encoder memory that callers run once
//    per source sentence, and a query projection run every step.
// Masks are additive float biases built once per batch and shared by every layer.
//
// Shape: inputs [B, T, D]; per-head tensors [B, H, T, dk] with dk = D / H;
// attention weights [B, H, Tq, Tk].
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <string>
#include <vector>

#include "nmt/kernels/kernel_choice.h"
#include "nmt/models/linear.h"

namespace nmt {

/// Keys and values split into heads. Shape: [N, H, Tk, dk] each.
struct KeyValue {
  torch::Tensor keys;
  torch::Tensor values;
  /// Which row of keys/values each query row reads; undefined: query row b reads row b
  /// (N = B). [B] int64: one row for every position (encoder memory kept once per
  /// sentence and shared by its hypotheses). [B, Tk] int64: a row per position (the
  /// decoder's self-attention cache, see KeyValueCache).
  torch::Tensor rows;
};

/// The self-attention keys/values of every hypothesis of a search, stored as a tree so
/// that neither a step nor a beam reorder copies a prefix: position t of query row b is
/// buffer row rows[b][t]. A step writes each row's new position into buffer row b;
/// a reorder permutes only the small `rows` table (the earlier positions of a buffer
/// row are never written again, so every hypothesis that points at them still finds
/// them). Shape: keys/values [N, H, capacity, dk] with N >= B rows; rows [B, length + T]
/// int64 with column `length` onwards set to b for the positions being written.
struct KeyValueCache {
  torch::Tensor keys;
  torch::Tensor values;
  torch::Tensor rows;
  int64_t length = 0;  ///< positions already filled (the step being decoded)
};

struct AttentionOutput {
  torch::Tensor output;   ///< [B, Tq, D] after the output projection
  torch::Tensor weights;  ///< [B, H, Tq, Tk] softmax weights (before attention dropout)
};

/// Which kernels attention runs (KernelChoice, from kernel_choice_for of the model's
/// activations), decided when the model is set up (built, moved, or put on a Linear path:
/// transformer.h), never by the tensors of a call:
///   torch_ops  torch::matmul and softmax: a model that does not compute in fp32 on the
///              CPU (its Linear paths all give fp32 activations: linear.h).
///   cpu_fp32   the project's kernels: the batched products (kernels/attention_products.h)
///              and, for one query position per row (decoding), single-query attention
///              (kernels/single_query_attention.h). Which of the two a call takes is the one
///              choice left to the call, because it is what the call is
///              (AttentionBase::takes_single_query): one query position, the module in eval
///              mode, no tensor needing a gradient, and no mask across positions (a bias of
///              one row per memory row, or none). Other shapes the kernels cannot read are
///              errors (nmt::Error), not another path.

/// What computes attention with `kernel`, for --verbose (describe_compute).
std::string describe_attention_kernel(KernelChoice kernel);

/// Shape: [B, S] bool (true at real tokens) -> [B, 1, 1, S] float, 0 at tokens and a
/// large negative number at padding. Finite, so a fully padded row cannot produce NaN.
torch::Tensor padding_bias(const torch::Tensor& mask, torch::ScalarType dtype);
/// Shape: [T, T] float, 0 on and below the diagonal, large negative above it
/// (position t may only attend to positions <= t).
torch::Tensor causal_bias(int64_t length, const torch::TensorOptions& options);

/// Xavier-uniform initialisation of a Linear whose output stacks `blocks` square
/// D x D projections (fused Q/K/V): each block is initialised as if it were its own
/// layer, so fusing does not change the initial scale. Biases start at zero.
void init_linear(Linear& linear, int64_t blocks = 1);

/// What self- and cross-attention share: head split, attention, output projection.
class AttentionBase : public torch::nn::Module {
 public:
  int64_t heads() const { return heads_; }
  int64_t head_dim() const { return head_dim_; }
  /// The kernels attention and its weights' dropout run (cpu_fp32 as built: a model is
  /// built in fp32 on the CPU).
  KernelChoice kernel() const { return kernel_; }
  /// Set when the model is set up (TransformerModel), not per call.
  void use_kernels(KernelChoice kernel) { kernel_ = kernel; }

 protected:
  AttentionBase(int64_t d_model, int64_t heads, double dropout);
  /// Shape: projection [B, T, k*D] -> k tensors [B, H, T, dk] (views, no copy).
  std::vector<torch::Tensor> split_heads(const torch::Tensor& projected, int64_t parts) const;
  /// softmax(q k^T / sqrt(dk) + bias) v, heads merged, output projection applied.
  /// Shape: query [B, H, Tq, dk], memory [N, H, Tk, dk] read through memory.rows, bias
  /// broadcastable to [B, H, Tq, Tk] (or [N, 1, 1, Tk] with one memory row per query
  /// row, memory.rows [B]; or undefined) -> AttentionOutput.
  AttentionOutput attend(const torch::Tensor& query, const KeyValue& memory,
                         const torch::Tensor& bias);
  /// Whether this call is one that single-query attention computes on fp32_cpu: one query
  /// position, the module in eval mode, no input that needs a gradient, and a bias [N, 1, 1,
  /// Tk] or none (a causal mask [Tq, Tk], as a one-position teacher-forced pass has, is
  /// full-sequence attention's).
  bool takes_single_query(const torch::Tensor& query, const KeyValue& memory, const torch::Tensor& bias) const;

  int64_t d_model_;
  int64_t heads_;
  int64_t head_dim_;
  double dropout_;
  double scale_;
  Linear output_{nullptr};

 private:
  /// softmax(bias + scale q k^T) v with weights and context by `kernel_`'s products.
  AttentionOutput attend_all_rows(const torch::Tensor& query, const KeyValue& shared, const torch::Tensor& shared_bias);

  KernelChoice kernel_ = KernelChoice::cpu_fp32;
};

class SelfAttentionImpl : public AttentionBase {
 public:
  SelfAttentionImpl(int64_t d_model, int64_t heads, double dropout);
  /// Shape: x [B, T, D], bias broadcastable to [B, H, T, Tk] -> output [B, T, D].
  /// With a cache (which must have room: see KeyValueCache), the new keys/values are
  /// written at positions [length, length + T) of buffer rows 0..B-1 and attention reads
  /// through cache->rows (Tk = length + T); without one, Tk = T.
  AttentionOutput forward(const torch::Tensor& x, const torch::Tensor& bias,
                          KeyValueCache* cache = nullptr);
  /// As above with queries from one input and keys and values from another of the same
  /// shape (model.transformer.norm pre_query); the same tensor twice is the call above.
  AttentionOutput forward(const torch::Tensor& queries_from, const torch::Tensor& keys_values_from,
                          const torch::Tensor& bias, KeyValueCache* cache = nullptr);

 private:
  /// Q, K, V [B, H, T, dk] each, from one projection of x or, for two inputs, of both.
  std::vector<torch::Tensor> project(const torch::Tensor& queries_from, const torch::Tensor& keys_values_from);

  Linear qkv_{nullptr};
};
TORCH_MODULE(SelfAttention);

class CrossAttentionImpl : public AttentionBase {
 public:
  CrossAttentionImpl(int64_t d_model, int64_t heads, double dropout);
  /// Keys and values of the encoder memory, contiguous so every step's matmul reads
  /// them in place. Shape: memory [B, S, D] -> [B, H, S, dk] each.
  KeyValue project_memory(const torch::Tensor& memory);
  /// Shape: x [B, T, D], memory [N, H, S, dk], bias [N, 1, 1, S] -> output [B, T, D],
  /// weights [B, H, T, S]. Query row b reads memory row memory.rows[b] (b if undefined).
  AttentionOutput forward(const torch::Tensor& x, const KeyValue& memory,
                          const torch::Tensor& bias);

 private:
  Linear query_{nullptr};
  Linear key_value_{nullptr};
};
TORCH_MODULE(CrossAttention);

}  // namespace nmt
