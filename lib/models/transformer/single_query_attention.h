#pragma once
// Attention for one query position per row, as in incremental decoding (lib/ only).
//
// torch::matmul on [B, H, 1, dk] x [B, H, dk, T] becomes at::bmm, which on CPU without
// MKL runs one GEMM call per (row, head): thousands of calls on 1 x 64 matrices per
// decoder layer and step. That per-call overhead was most of the time of a beam-5
// search, so decoding computes these small products in one parallel loop instead.
#include <torch/types.h>

#include "nmt/models/transformer/multi_head_attention.h"

namespace nmt {

struct SingleQueryAttention {
  torch::Tensor context;  ///< [B, 1, H * dk]: heads merged, ready for the output projection
  torch::Tensor weights;  ///< [B, H, 1, T] softmax weights
};

/// softmax(scale * q k^T + bias) v for every row and head.
/// Shape: query [B, H, 1, dk], memory keys/values [N, H, T, dk] (any strides, the
/// last one 1) read through memory.rows (see KeyValue), bias [N, 1, 1, T] (read at the
/// row of position 0) or undefined. Float32 on the CPU only.
SingleQueryAttention single_query_attention(const torch::Tensor& query, const KeyValue& memory,
                                            const torch::Tensor& bias, double scale);

/// Whether single_query_attention can take these inputs (else use the matmul path,
/// after gathering memory.rows).
bool single_query_applies(const torch::Tensor& query, const KeyValue& memory,
                          const torch::Tensor& bias);

}  // namespace nmt
