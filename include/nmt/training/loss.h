#pragma once
#include <torch/types.h>

#include "nmt/kernels/kernel_choice.h"
#include "nmt/models/model.h"
#include "nmt/text/batching.h"

namespace nmt {

struct LossSums {
  torch::Tensor loss;  ///< summed label-smoothed loss (what is optimised), scalar
  torch::Tensor nll;   ///< summed negative log-likelihood (for perplexity), scalar
};

/// Which computation the loss runs (KernelChoice) is decided once for a run by its device,
/// never by the logits of a call: a model's logits are fp32 whatever its Linear path
/// (linear.h), so kernel_choice_for(device, fp32): on the CPU the project's kernel reads
/// them (kernels/smoothed_cross_entropy.h: one pass forward, the gradient written in one
/// pass); elsewhere LibTorch's operations.

/// Label-smoothed cross-entropy summed over non-padding positions (target 0 = pad).
/// Uses (1-eps)*nll + eps*mean(-log p) per token, the mean over the ids that can be
/// targets (all but pad and bos, which get no mass): no dense smoothed target is built.
/// Built once where training (or validation) starts, for its device and smoothing.
class Loss {
 public:
  Loss(const torch::Device& device, double epsilon);

  KernelChoice kernel() const { return kernel_; }

  /// Shape: logits [..., V], target [...]: [B, T, V] and [B, T], or [N, V] and [N].
  /// nmt::Error where the kernel was chosen and the logits are not fp32 on the CPU.
  LossSums operator()(const torch::Tensor& logits, const torch::Tensor& target) const;

  /// The loss of one batch under teacher forcing, scored at its target tokens only
  /// (Seq2SeqModel::forward_at; padding gets no scores): the same sums as operator() over
  /// forward()'s logits. The positions are found on the host, before the batch moves to
  /// the device: no device sync.
  LossSums of_batch(Seq2SeqModel& model, const Batch& batch) const;

 private:
  torch::Device device_;
  double epsilon_;
  KernelChoice kernel_;
};

}  // namespace nmt
