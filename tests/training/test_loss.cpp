// The training loss: label-smoothed cross-entropy over non-padding positions, with the
// smoothing mass spread over the ids that can be targets (not pad 0, not bos 2).
#include "support/catch.h"
#include <torch/torch.h>

#include <string>

#include "nmt/models/transformer/transformer.h"
#include "nmt/training/loss.h"
#include "support/small_transformer.h"

namespace {

// The loss as a run on the logits' device computes it.
nmt::LossSums label_smoothed_loss(const torch::Tensor& logits, const torch::Tensor& target, double epsilon) {
  return nmt::Loss(logits.device(), epsilon)(logits, target);
}

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

namespace {

// The same sums through LibTorch's operations and autograd: the form the CPU kernel replaces.
nmt::LossSums autograd_reference(const torch::Tensor& logits, const torch::Tensor& target, double epsilon) {
  const auto log_probs = torch::log_softmax(logits.to(torch::kDouble), -1);
  const auto mask = target.ne(0).to(torch::kDouble);
  const auto nll = (-log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1) * mask).sum();
  const auto allowed = log_probs.sum(-1) - log_probs.select(-1, 0) - log_probs.select(-1, 2);
  const auto uniform = (-allowed / static_cast<double>(logits.size(-1) - 2) * mask).sum();
  return {(1 - epsilon) * nll + epsilon * uniform, nll.detach()};
}

}  // namespace

TEST_CASE("the CPU loss kernel gives autograd's loss and gradient", "[loss]") {
  torch::manual_seed(11);
  // 37 ids: not a multiple of the kernel's 16 lanes; one row padded; logits far apart.
  for (double scale : {1.0, 30.0}) {
    for (double epsilon : {0.0, 0.1}) {
      INFO("scale " << scale << ", epsilon " << epsilon);
      const auto values = torch::randn({3, 5, 37}) * scale;
      const auto target = torch::randint(3, 37, {3, 5}, torch::kLong);
      target[2][4] = 0;
      auto logits = values.clone().requires_grad_(true);
      const auto sums = label_smoothed_loss(logits, target, epsilon);
      CHECK(std::string(sums.loss.grad_fn()->name()).find("SmoothedCrossEntropy") != std::string::npos);
      (sums.loss * 0.25).backward();
      auto reference_logits = values.to(torch::kDouble).requires_grad_(true);
      const auto reference = autograd_reference(reference_logits, target, epsilon);
      (reference.loss * 0.25).backward();
      CHECK(sums.loss.item<double>() == Approx(reference.loss.item<double>()).epsilon(1e-5));
      CHECK(sums.nll.item<double>() == Approx(reference.nll.item<double>()).epsilon(1e-5));
      const double gap = (logits.grad().to(torch::kDouble) - reference_logits.grad()).abs().max().item<double>();
      CHECK(gap < 1e-6);
      CHECK(logits.grad()[2][4].abs().max().item<double>() == 0);  // the padded row
    }
  }
}

TEST_CASE("the loss refuses targets outside the vocabulary", "[loss]") {
  const auto logits = torch::randn({1, 2, 5});
  CHECK_THROWS_WITH(label_smoothed_loss(logits, torch::tensor({{3, 5}}, torch::kLong), 0.1),
                    HasSubstring("target id 5 outside the vocabulary of 5"));
}

TEST_CASE("a batch's loss scored at its target tokens only is the loss over every position", "[loss]") {
  torch::manual_seed(3);
  nmt::TransformerModel model(nmt::test::small_transformer());  // no dropout: training mode, same numbers both ways
  nmt::Batch batch;
  batch.source = torch::tensor({5, 6, 7, 3, 9, 3, 0, 0}, torch::kLong).view({2, 4});
  batch.target_input = torch::tensor({2, 11, 12, 13, 2, 14, 0, 0}, torch::kLong).view({2, 4});
  batch.target_output = torch::tensor({11, 12, 13, 3, 14, 3, 0, 0}, torch::kLong).view({2, 4});
  batch.target_tokens = 6;
  const auto gradients = [&model] {
    std::vector<torch::Tensor> out;
    for (auto& p : model.parameters()) out.push_back(p.grad().clone()), p.mutable_grad() = torch::Tensor();
    return out;
  };
  const auto scored = nmt::Loss(torch::kCPU, 0.1).of_batch(model, batch);
  scored.loss.backward();
  const auto scored_gradients = gradients();
  const auto logits = model.forward(batch.source, batch.target_input).logits;
  const auto every = label_smoothed_loss(logits, batch.target_output, 0.1);
  every.loss.backward();
  const auto every_gradients = gradients();
  CHECK(scored.loss.item<double>() == Approx(every.loss.item<double>()).epsilon(1e-6));
  CHECK(scored.nll.item<double>() == Approx(every.nll.item<double>()).epsilon(1e-6));
  REQUIRE(scored_gradients.size() == every_gradients.size());
  for (size_t i = 0; i < scored_gradients.size(); ++i)
    CHECK((scored_gradients[i] - every_gradients[i]).abs().max().item<double>() < 1e-6);
}

TEST_CASE("the loss's kernel is chosen by the run's device, and refuses logits it cannot read", "[loss]") {
  CHECK(nmt::Loss(torch::kCPU, 0.1).kernel() == nmt::KernelChoice::cpu_fp32);
  const nmt::Loss elsewhere(torch::Device(torch::kCUDA), 0.1);
  CHECK(elsewhere.kernel() == nmt::KernelChoice::torch_ops);
  torch::manual_seed(5);
  const auto logits = torch::randn({4, 11});
  const auto target = torch::tensor({3, 0, 7, 10}, torch::kLong);
  // LibTorch's operations (they run on the CPU tensors given) give the kernel's sums.
  CHECK(elsewhere(logits, target).loss.item<double>() ==
        Approx(label_smoothed_loss(logits, target, 0.1).loss.item<double>()).epsilon(1e-5));
  CHECK_THROWS_WITH(label_smoothed_loss(logits.to(torch::kDouble), target, 0.1), HasSubstring("fp32 logits"));
}
