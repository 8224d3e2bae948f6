#pragma once
// One GRUCell step whose two GEMMs go through apply_linear, so the attention family's
// decoder uses the same matrix-product path as the Transformer: oneDNN fp32 at inference
// (RNN inference has no bf16 yet), bf16 under a Bf16ComputeScope in training. Training in
// fp32 (grad mode on, no scope) calls the module itself, so autograd is the module's.
#include <torch/nn/modules/rnn.h>
#include <torch/types.h>

namespace nmt {

/// cell(x, h): x [B, in], h [B, H] -> [B, H]. Outside fp32 training, the same operations
/// in the same order as LibTorch's CPU GRUCell (r, z from the summed gates, then n, then
/// h' = (h - n) z + n), so only the products' library and precision differ: in place
/// without grad mode, out of place (differentiable) in mixed-precision training.
torch::Tensor gru_cell_step(torch::nn::GRUCell& cell, const torch::Tensor& x, const torch::Tensor& h);

}  // namespace nmt
