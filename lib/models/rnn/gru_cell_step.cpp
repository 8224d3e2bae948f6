#include "nmt/models/rnn/gru_cell_step.h"

#include <torch/torch.h>

#include "nmt/models/precision.h"

namespace nmt {

namespace {

// Out of place, so autograd can differentiate it; the gate arithmetic stays fp32 because
// apply_linear returns its products in the input's dtype.
torch::Tensor differentiable_step(torch::nn::GRUCell& cell, const torch::Tensor& x, const torch::Tensor& h) {
  const auto input_gates = apply_linear(x, cell->weight_ih, cell->bias_ih).chunk(3, 1);
  const auto hidden_gates = apply_linear(h, cell->weight_hh, cell->bias_hh).chunk(3, 1);
  const auto reset = torch::sigmoid(input_gates[0] + hidden_gates[0]);
  const auto update = torch::sigmoid(input_gates[1] + hidden_gates[1]);
  const auto candidate = torch::tanh(input_gates[2] + reset * hidden_gates[2]);
  return (h - candidate) * update + candidate;
}

// No autograd: in-place gate arithmetic, no intermediate kept.
torch::Tensor inference_step(torch::nn::GRUCell& cell, const torch::Tensor& x, const torch::Tensor& h) {
  const auto input_gates = apply_linear(x, cell->weight_ih, cell->bias_ih).unsafe_chunk(3, 1);
  const auto hidden_gates = apply_linear(h, cell->weight_hh, cell->bias_hh).unsafe_chunk(3, 1);
  const auto reset = hidden_gates[0].add_(input_gates[0]).sigmoid_();
  const auto update = hidden_gates[1].add_(input_gates[1]).sigmoid_();
  const auto candidate = input_gates[2].add(hidden_gates[2].mul_(reset)).tanh_();
  return (h - candidate).mul_(update).add_(candidate);
}

}  // namespace

torch::Tensor gru_cell_step(torch::nn::GRUCell& cell, const torch::Tensor& x, const torch::Tensor& h) {
  if (!torch::GradMode::is_enabled()) return inference_step(cell, x, h);
  // Mixed-precision training: the module's own products would stay fp32.
  if (computes_in_bf16(cell->weight_ih)) return differentiable_step(cell, x, h);
  return cell(x, h);
}

}  // namespace nmt
