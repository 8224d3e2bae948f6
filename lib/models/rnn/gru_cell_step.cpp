#include "nmt/models/rnn/gru_cell_step.h"

#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/models/linear.h"

namespace nmt {

namespace {

// Out of place, so autograd can differentiate it; the gate arithmetic stays fp32 because
// the products come back in the input's dtype.
torch::Tensor differentiable_step(torch::nn::GRUCell& cell, LinearPath path, const torch::Tensor& x,
                                  const torch::Tensor& h) {
  const auto input_gates = fp32_weight_linear(path, x, cell->weight_ih, cell->bias_ih).chunk(3, 1);
  const auto hidden_gates = fp32_weight_linear(path, h, cell->weight_hh, cell->bias_hh).chunk(3, 1);
  const auto reset = torch::sigmoid(input_gates[0] + hidden_gates[0]);
  const auto update = torch::sigmoid(input_gates[1] + hidden_gates[1]);
  const auto candidate = torch::tanh(input_gates[2] + reset * hidden_gates[2]);
  return (h - candidate) * update + candidate;
}

// No autograd: in-place gate arithmetic, no intermediate kept.
torch::Tensor inference_step(torch::nn::GRUCell& cell, LinearPath path, const torch::Tensor& x,
                             const torch::Tensor& h) {
  const auto input_gates = fp32_weight_linear(path, x, cell->weight_ih, cell->bias_ih).unsafe_chunk(3, 1);
  const auto hidden_gates = fp32_weight_linear(path, h, cell->weight_hh, cell->bias_hh).unsafe_chunk(3, 1);
  const auto reset = hidden_gates[0].add_(input_gates[0]).sigmoid_();
  const auto update = hidden_gates[1].add_(input_gates[1]).sigmoid_();
  const auto candidate = input_gates[2].add(hidden_gates[2].mul_(reset)).tanh_();
  return (h - candidate).mul_(update).add_(candidate);
}

}  // namespace

torch::Tensor gru_cell_step(torch::nn::GRUCell& cell, LinearPath path, const torch::Tensor& x, const torch::Tensor& h) {
  switch (path) {
    case LinearPath::fp32_torch: return cell(x, h);
    case LinearPath::fp32_onednn:  // validation, inference; fp32 training on AVX-512
    case LinearPath::fp32_packed:  // inference: the cells' weights are not packed, sgemm reads them
      return torch::GradMode::is_enabled() ? differentiable_step(cell, path, x, h) : inference_step(cell, path, x, h);
    case LinearPath::bf16_mixed: return differentiable_step(cell, path, x, h);
    case LinearPath::bf16_weights:
    case LinearPath::int8: break;
  }
  throw Error("GRU cells run no " + linear_path_name(path) + " path: their weights stay fp32");
}

std::string describe_gru_cell_step(LinearPath path) {
  if (path == LinearPath::fp32_torch) return "fp32, LibTorch's GRUCell";
  return describe_linear_path(path) + "; gate arithmetic fp32";
}

}  // namespace nmt
