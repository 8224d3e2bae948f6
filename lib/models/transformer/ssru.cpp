#include "nmt/models/transformer/ssru.h"

#include <torch/torch.h>

#include <vector>

#include "nmt/models/transformer/multi_head_attention.h"

namespace nmt {

SSRUImpl::SSRUImpl(int64_t d_model) {
  transform_ = register_module("transform", Linear(d_model, d_model, /*with_bias=*/false));
  forget_ = register_module("forget", Linear(d_model, d_model));
  // Glorot-uniform weights and a zero bias, as Marian initialises W, Wf and bf.
  init_linear(transform_);
  init_linear(forget_);
}

torch::Tensor SSRUImpl::forward(const torch::Tensor& x, torch::Tensor* cell) {
  // Both products for every position at once; only the gate's blend is sequential.
  const auto forget = torch::sigmoid(forget_(x));  // [B, T, D]
  const auto blended_input = (1 - forget) * transform_(x);
  torch::Tensor state = cell != nullptr && cell->defined() ? *cell : torch::zeros({x.size(0), x.size(2)}, x.options());
  const auto positions = x.size(1);
  std::vector<torch::Tensor> states;
  states.reserve(static_cast<size_t>(positions));
  for (int64_t t = 0; t < positions; ++t) {
    // f * c + (1 - f) * xW, the products and the sum in Marian's order (its highway op).
    state = forget.select(1, t) * state + blended_input.select(1, t);
    states.push_back(state);
  }
  if (cell != nullptr) *cell = state;
  return torch::relu(positions == 1 ? states.front().unsqueeze(1) : torch::stack(states, 1));
}

}  // namespace nmt
