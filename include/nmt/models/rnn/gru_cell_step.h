#pragma once
// One GRUCell step on the model's Linear path, so the attention family's decoder computes
// its two GEMMs as its Linear layers do: on fp32_torch the module itself (its autograd);
// on fp32_onednn oneDNN's products, with in-place gate arithmetic when no gradients are
// recorded (inference, validation) and differentiable gate arithmetic when they are;
// on bf16_mixed (mixed-precision training) bf16 products with differentiable fp32 gate
// arithmetic. The gate arithmetic is LibTorch's CPU GRUCell's, in its order (r, z from the
// summed gates, then n, then h' = (h - n) z + n), so only the products differ.
#include <torch/nn/modules/rnn.h>
#include <torch/types.h>

#include <string>

#include "nmt/models/linear_path.h"

namespace nmt {

/// cell(x, h) on `path`: x [B, in], h [B, H] -> [B, H]. nmt::Error on a converting path
/// (the RNN families do not convert their weights).
torch::Tensor gru_cell_step(torch::nn::GRUCell& cell, LinearPath path, const torch::Tensor& x, const torch::Tensor& h);

/// What computes a GRU cell step on `path`, for --verbose.
std::string describe_gru_cell_step(LinearPath path);

}  // namespace nmt
