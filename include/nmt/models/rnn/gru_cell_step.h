#pragma once
// One GRUCell step whose two GEMMs go through apply_linear at inference, so the attention
// family's decoder uses the same matrix-product path (oneDNN fp32) as the Transformer.
// Training (grad mode on) calls the module itself, so autograd is the module's.
#include <torch/nn/modules/rnn.h>
#include <torch/types.h>

namespace nmt {

/// cell(x, h): x [B, in], h [B, H] -> [B, H]. Without grad mode, the same operations in
/// the same order as LibTorch's CPU GRUCell (r, z from the summed gates, then n, then
/// h' = (h - n) z + n), so only the products' library differs.
torch::Tensor gru_cell_step(torch::nn::GRUCell& cell, const torch::Tensor& x, const torch::Tensor& h);

}  // namespace nmt
