#pragma once
#include <torch/types.h>

namespace nmt {

struct LossSums {
  torch::Tensor loss;  ///< summed label-smoothed loss (what is optimised), scalar
  torch::Tensor nll;   ///< summed negative log-likelihood (for perplexity), scalar
};

/// Label-smoothed cross-entropy summed over non-padding positions (target 0 = pad).
/// Uses (1-eps)*nll + eps*mean(-log p) per token, the mean over the ids that can be
/// targets (all but pad and bos, which get no mass): no dense smoothed target is built.
/// fp32 logits on the CPU take a kernel that reads them once forward and writes their
/// gradient in one pass (smoothed_cross_entropy.h); elsewhere LibTorch's operations.
/// Shape: logits [B, T, V], target [B, T].
LossSums label_smoothed_loss(const torch::Tensor& logits, const torch::Tensor& target, double epsilon);

}  // namespace nmt
