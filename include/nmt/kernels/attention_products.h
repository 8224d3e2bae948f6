#pragma once
// Attention's two batched products, q k^T and weights v, for every (row, head) at once,
// forward and backward.
//
// torch::matmul on [B, H, T, dk] tensors becomes at::bmm, which on CPU without MKL runs one
// GEMM call (plus a select and a conjugation check) per (row, head): a training batch of
// 4,096 tokens of ~14-token sentences makes ~1,200 calls on 14 x 64 matrices per product,
// and a Transformer step has 54 such products (3 per attention block forward, 3 backward,
// 9 blocks). Measured there: 7-15 GFLOP/s, a sixth of a step on 1% of its FLOPs. These
// compute every slice in one parallel loop instead.
#include <torch/types.h>

namespace nmt {

/// query key^T for every row and head: [B, H, Tq, dk] x [B, H, Tk, dk] -> [B, H, Tq, Tk]
/// (contiguous). Differentiable in both inputs.
torch::Tensor attention_scores(const torch::Tensor& query, const torch::Tensor& keys);

/// weights values for every row and head: [B, H, Tq, Tk] x [B, H, Tk, dk] -> [B, H, Tq, dk],
/// a view of [B, Tq, H, dk] memory (heads merge into [B, Tq, H * dk] without a copy).
/// Differentiable in both inputs.
torch::Tensor attention_context(const torch::Tensor& weights, const torch::Tensor& values);

/// Whether the two functions above take these tensors: float32 on the CPU, 4-D, the last
/// stride 1, sizes that agree (query [B, H, Tq, dk], keys and values [B, H, Tk, dk]).
/// They throw nmt::Error for others (the kernels read raw memory).
bool attention_products_apply(const torch::Tensor& query, const torch::Tensor& keys, const torch::Tensor& values);

/// Whether attention_context takes these weights (float32 on the CPU, [B, H, Tq, Tk], the
/// last stride 1) with these values: not scores that a bias broadcast to more rows than
/// the values have, or to another dtype.
bool attention_context_applies(const torch::Tensor& weights, const torch::Tensor& values);

}  // namespace nmt
