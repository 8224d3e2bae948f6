#include "nmt/training/loss.h"

#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/text/tokenizer.h"
#include "nmt/kernels/smoothed_cross_entropy.h"

namespace nmt {

namespace {

// The same sums from LibTorch's operations, for logits of any dtype on any device.
LossSums with_torch_operations(const torch::Tensor& logits, const torch::Tensor& target, double epsilon) {
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

}  // namespace

Loss::Loss(const torch::Device& device, double epsilon)
    : device_(device), epsilon_(epsilon), kernel_(kernel_choice_for(device, torch::kFloat)) {}

LossSums Loss::operator()(const torch::Tensor& logits, const torch::Tensor& target) const {
  if (kernel_ == KernelChoice::torch_ops) return with_torch_operations(logits, target, epsilon_);
  if (!smoothed_cross_entropy_applies(logits))
    throw Error("loss: the CPU kernel takes fp32 logits on the CPU, got " +
                std::string(c10::toString(logits.scalar_type())) + " on " + logits.device().str());
  auto sums = smoothed_cross_entropy(logits, target, epsilon_, {SpecialIds::kPad, SpecialIds::kBos});
  return {sums.loss, sums.nll};
}

LossSums Loss::of_batch(Seq2SeqModel& model, const Batch& batch) const {
  const auto targets = batch.target_output.reshape({-1});
  const auto positions = targets.ne(SpecialIds::kPad).nonzero().squeeze(1);
  const auto logits = model.forward_at(batch.source.to(device_), batch.target_input.to(device_), positions.to(device_));
  return (*this)(logits, targets.index_select(0, positions).to(device_));
}

}  // namespace nmt
