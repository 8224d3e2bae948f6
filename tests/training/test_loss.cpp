// The training loss: label-smoothed cross-entropy over non-padding positions, with the
// smoothing mass spread over the ids that can be targets (not pad 0, not bos 2).
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "nmt/training/loss.h"

using nmt::label_smoothed_loss;

namespace {

// The textbook form: cross-entropy against a dense smoothed target distribution.
double dense_reference(const torch::Tensor& logits, const torch::Tensor& target, double epsilon) {
  const auto vocab = logits.size(-1);
  const auto log_probs = torch::log_softmax(logits, -1);
  double total = 0;
  for (int64_t b = 0; b < target.size(0); ++b) {
    for (int64_t t = 0; t < target.size(1); ++t) {
      const auto gold = target[b][t].item<int64_t>();
      if (gold == 0) continue;
      auto distribution = torch::full({vocab}, epsilon / static_cast<double>(vocab - 2));
      distribution[0] = 0;
      distribution[2] = 0;
      distribution[gold] += 1 - epsilon;
      total -= (distribution * log_probs[b][t]).sum().item<double>();
    }
  }
  return total;
}

}  // namespace

TEST_CASE("label-smoothed loss equals the dense smoothed target, padding excluded", "[loss]") {
  torch::manual_seed(5);
  const auto logits = torch::randn({2, 3, 7});
  const auto target = torch::tensor({{4, 5, 3}, {6, 3, 0}}, torch::kLong);  // one padded position
  for (double epsilon : {0.0, 0.1, 0.3}) {
    INFO("epsilon " << epsilon);
    const auto sums = label_smoothed_loss(logits, target, epsilon);
    CHECK(sums.loss.item<double>() == Approx(dense_reference(logits, target, epsilon)).epsilon(1e-5));
    CHECK(sums.nll.item<double>() == Approx(dense_reference(logits, target, 0.0)).epsilon(1e-5));
  }
  // Whatever the logits at a padded position, the loss does not change.
  auto changed = logits.clone();
  changed[1][2] = torch::randn({7}) * 100;
  CHECK(label_smoothed_loss(changed, target, 0.1).loss.item<double>() ==
        Approx(label_smoothed_loss(logits, target, 0.1).loss.item<double>()).epsilon(1e-6));
}

TEST_CASE("label smoothing pushes pad and bos down, never up", "[loss]") {
  // At the optimum of the smoothed loss, p(pad) and p(bos) go to 0: their gradient is
  // their probability (d loss / d logit_v = p_v - q_v with q_v = 0).
  auto logits = torch::zeros({1, 1, 6}, torch::requires_grad());
  const auto target = torch::tensor({{4}}, torch::kLong);
  label_smoothed_loss(logits, target, 0.2).loss.backward();
  const auto grad = logits.grad()[0][0];
  const double p = 1.0 / 6;
  CHECK(grad[0].item<double>() == Approx(p));
  CHECK(grad[2].item<double>() == Approx(p));
  CHECK(grad[1].item<double>() == Approx(p - 0.2 / 4));
  CHECK(grad[4].item<double>() == Approx(p - 0.8 - 0.2 / 4));
}
