#pragma once
// The training loss on the CPU in fp32, forward and backward in one pass over the logits
// each. Autograd through log_softmax, gather, sum and two selects makes about a dozen
// passes over the [rows, vocab] logits (the largest tensor of a step: 4096 x 8000 floats
// = 131 MB) and fills zero buffers for each gather/select gradient; here the gradient is
// written in closed form, d loss / d logit_j = g * mask * (softmax_j - q_j), with q the
// smoothed target distribution ((1 - eps) on the gold id, eps / (V - 2) on every id but
// the two that are never targets: pad and bos).
#include <torch/types.h>


namespace nmt {

/// Whether smoothed_cross_entropy takes these logits: fp32 on the CPU.
bool smoothed_cross_entropy_applies(const torch::Tensor& logits);

/// The ids that get no smoothing mass; rows whose target is `pad` are left out.
struct NonTargetIds {
  int64_t pad = 0;
  int64_t bos = 0;
};

struct CrossEntropySums {
  torch::Tensor loss;  ///< summed label-smoothed loss, scalar, differentiable in the logits
  torch::Tensor nll;   ///< summed negative log-likelihood, scalar
};

/// training/loss.h's Loss for logits [..., V] and target [...]: the same
/// sums, differentiable with respect to the logits.
CrossEntropySums smoothed_cross_entropy(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                                        NonTargetIds ids);

}  // namespace nmt
