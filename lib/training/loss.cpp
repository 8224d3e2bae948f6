#include "nmt/training/loss.h"

namespace nmt {

LossSums label_smoothed_loss(const torch::Tensor& logits, const torch::Tensor& target, double epsilon) {
  const auto log_probs = torch::log_softmax(logits, -1);
  const auto mask = target.ne(0);
  const auto nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1);
  const auto nll_sum = nll.masked_select(mask).sum();
  if (epsilon == 0) return {nll_sum, nll_sum.detach()};
  const auto uniform = -log_probs.mean(-1);
  const auto smooth_sum = uniform.masked_select(mask).sum();
  return {(1 - epsilon) * nll_sum + epsilon * smooth_sum, nll_sum.detach()};
}

}  // namespace nmt
