#include "nmt/models/rnn/gru_cell_step.h"

#include <torch/torch.h>

#include "nmt/models/precision.h"

namespace nmt {

torch::Tensor gru_cell_step(torch::nn::GRUCell& cell, const torch::Tensor& x, const torch::Tensor& h) {
  if (torch::GradMode::is_enabled()) return cell(x, h);
  const auto input_gates = apply_linear(x, cell->weight_ih, cell->bias_ih).unsafe_chunk(3, 1);
  const auto hidden_gates = apply_linear(h, cell->weight_hh, cell->bias_hh).unsafe_chunk(3, 1);
  const auto reset = hidden_gates[0].add_(input_gates[0]).sigmoid_();
  const auto update = hidden_gates[1].add_(input_gates[1]).sigmoid_();
  const auto candidate = input_gates[2].add(hidden_gates[2].mul_(reset)).tanh_();
  return (h - candidate).mul_(update).add_(candidate);
}

}  // namespace nmt
