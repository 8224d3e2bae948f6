#pragma once
// How far apart two tensors are, for tests that compare two ways of computing one thing.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include <torch/torch.h>

namespace nmt::test {

/// The largest absolute elementwise difference of a and b (broadcast).
inline double max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

/// The largest max_diff over two lists of tensors of the same length (parameters, gradients).
inline double max_diff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size())
    throw std::invalid_argument(std::to_string(a.size()) + " tensors against " + std::to_string(b.size()));
  double largest = 0;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, max_diff(a[i], b[i]));
  return largest;
}

}  // namespace nmt::test
