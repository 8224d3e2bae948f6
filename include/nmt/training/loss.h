#pragma once
#include <torch/types.h>

#include "nmt/models/model.h"
#include "nmt/text/batching.h"

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
/// Shape: logits [..., V], target [...]: [B, T, V] and [B, T], or [N, V] and [N].
LossSums label_smoothed_loss(const torch::Tensor& logits, const torch::Tensor& target, double epsilon);

/// The loss of one batch under teacher forcing, scored at its target tokens only
/// (Seq2SeqModel::forward_at; padding gets no scores): the same sums as
/// label_smoothed_loss over forward()'s logits. The positions are found on the host, before
/// the batch moves to `device`: no device sync.
LossSums batch_loss(Seq2SeqModel& model, const Batch& batch, const torch::Device& device, double epsilon);

}  // namespace nmt
