#pragma once
// How far apart two tensors are, for tests that compare two ways of computing one thing.
#include <torch/torch.h>

namespace nmt::test {

/// The largest absolute elementwise difference of a and b (broadcast).
inline double max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace nmt::test
