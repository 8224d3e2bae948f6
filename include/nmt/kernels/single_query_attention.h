#pragma once
// Attention for one query position per row, as in incremental decoding.
//
// torch::matmul on [B, H, 1, dk] x [B, H, dk, T] becomes at::bmm, which on CPU without
// MKL runs one GEMM call per (row, head): thousands of calls on 1 x 64 matrices per
// decoder layer and step. That per-call overhead was most of the time of a beam-5
// search, so decoding computes these small products in one parallel loop instead.
#include <torch/types.h>

namespace nmt {

struct SingleQueryAttention {
  torch::Tensor context;  ///< [B, 1, H * dk]: heads merged, ready for the output projection
  torch::Tensor weights;  ///< [B, H, 1, T] softmax weights
};

/// Keys and values read in place: [N, H, T, dk] each (any strides, the last one 1), and
/// which row query row b reads: rows undefined (row b), [B] int64 (one row for every
/// position) or [B, T] int64 (a row per position). The attention's KeyValue, as tensors.
struct SharedKeyValue {
  const torch::Tensor& keys;
  const torch::Tensor& values;
  const torch::Tensor& rows;
};

/// softmax(scale * q k^T + bias) v for every row and head.
/// Shape: query [B, H, 1, dk], memory as above, bias [N, 1, 1, T] (read at the row of
/// position 0) or undefined. Float32 on the CPU only; nmt::Error for inputs
/// single_query_applies refuses.
SingleQueryAttention single_query_attention(const torch::Tensor& query, const SharedKeyValue& memory,
                                            const torch::Tensor& bias, double scale);

/// Whether single_query_attention can read these inputs.
bool single_query_applies(const torch::Tensor& query, const SharedKeyValue& memory, const torch::Tensor& bias);

}  // namespace nmt
