#include "nmt/training/loss.h"

#include <torch/torch.h>

#include "nmt/text/tokenizer.h"
#include "nmt/kernels/smoothed_cross_entropy.h"

namespace nmt {

LossSums label_smoothed_loss(const torch::Tensor& logits, const torch::Tensor& target, double epsilon) {
  if (smoothed_cross_entropy_applies(logits)) {
    auto sums = smoothed_cross_entropy(logits, target, epsilon, {SpecialIds::kPad, SpecialIds::kBos});
    return {sums.loss, sums.nll};
  }
  // Elsewhere (bf16 logits, CUDA) the same sums from LibTorch's operations.
  const auto log_probs = torch::log_softmax(logits, -1);
  // Fixed-shape masked sums (no masked_select: no data-dependent shapes, no host sync).
  const auto mask = target.ne(SpecialIds::kPad).to(log_probs.scalar_type());
  const auto nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1);
  const auto nll_sum = (nll * mask).sum();
  if (epsilon == 0) return {nll_sum, nll_sum.detach()};
  // The smoothing mass goes to the ids that can be targets: not pad, not bos.
  const auto vocab = log_probs.size(-1);
  const auto impossible = log_probs.select(-1, SpecialIds::kPad) + log_probs.select(-1, SpecialIds::kBos);
  const auto uniform = -(log_probs.sum(-1) - impossible) / static_cast<double>(vocab - 2);
  const auto smooth_sum = (uniform * mask).sum();
  return {(1 - epsilon) * nll_sum + epsilon * smooth_sum, nll_sum.detach()};
}

LossSums batch_loss(Seq2SeqModel& model, const Batch& batch, const torch::Device& device, double epsilon) {
  const auto targets = batch.target_output.reshape({-1});
  const auto positions = targets.ne(SpecialIds::kPad).nonzero().squeeze(1);
  const auto logits = model.forward_at(batch.source.to(device), batch.target_input.to(device), positions.to(device));
  return label_smoothed_loss(logits, targets.index_select(0, positions).to(device), epsilon);
}

}  // namespace nmt
