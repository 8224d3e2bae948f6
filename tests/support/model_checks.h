#pragma once
// Checks that every Seq2SeqModel must pass, shared by the per-family test files.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/training/loss.h"
#include "nmt/models/model.h"

namespace nmt::test {

// Two sources (the second padded) and matching teacher-forced targets.
// Ids >= 4 are content; 3 = eos; 2 = bos; 0 = pad.
inline torch::Tensor sources() { return torch::tensor({{5, 6, 7, 8, 3}, {9, 4, 3, 0, 0}}, torch::kInt64); }
inline torch::Tensor targets_in() { return torch::tensor({{2, 4, 5, 6}, {2, 7, 8, 9}}, torch::kInt64); }
inline torch::Tensor targets_out() { return torch::tensor({{4, 5, 6, 3}, {7, 8, 9, 3}}, torch::kInt64); }

inline void check_shapes(Seq2SeqModel& model, int64_t vocab, bool attention) {
  model.eval();
  torch::NoGradGuard no_grad;
  const auto logits = model.forward(sources(), targets_in()).logits;
  CHECK(logits.sizes() == torch::IntArrayRef({2, 4, vocab}));
  auto state = model.initial_state(model.encode(sources()));
  const auto out = model.step(torch::tensor({2, 2}, torch::kInt64), *state);
  CHECK(out.scores.log_probs().sizes() == torch::IntArrayRef({2, vocab}));
  CHECK(model.has_attention() == attention);
  if (attention) CHECK(out.attention.sizes() == torch::IntArrayRef({2, 5}));
  CHECK(state->step == 1);
}

inline void check_step_matches_forward(Seq2SeqModel& model) {
  model.eval();
  torch::NoGradGuard no_grad;
  const auto expected = torch::log_softmax(model.forward(sources(), targets_in()).logits, -1);
  auto state = model.initial_state(model.encode(sources()));
  for (int64_t t = 0; t < 4; ++t) {
    const auto out = model.step(targets_in().select(1, t), *state);
    CHECK(torch::allclose(out.scores.log_probs(), expected.select(1, t), 1e-5, 1e-5));
  }
}

inline void check_padding_invariance(Seq2SeqModel& model) {
  model.eval();
  torch::NoGradGuard no_grad;
  const auto batch = model.forward(sources(), targets_in()).logits;
  const auto alone = model.forward(sources().slice(0, 1, 2).slice(1, 0, 3), targets_in().slice(0, 1, 2)).logits;
  CHECK(torch::allclose(batch.slice(0, 1, 2), alone, 1e-5, 1e-5));
}

inline void check_attention_rows(Seq2SeqModel& model) {
  model.eval();
  torch::NoGradGuard no_grad;
  auto state = model.initial_state(model.encode(sources()));
  const auto out = model.step(torch::tensor({2, 2}, torch::kInt64), *state);
  CHECK(torch::allclose(out.attention.sum(-1), torch::ones({2}), 1e-5, 1e-5));
  CHECK(out.attention[1].slice(0, 3).abs().sum().item<float>() == 0.0f);  // padding gets nothing
}

inline void check_overfits(Seq2SeqModel& model) {
  model.train();
  torch::optim::Adam optimizer(model.parameters(), torch::optim::AdamOptions(1e-2));
  double loss_per_token = 0;
  for (int step = 0; step < 300; ++step) {
    const auto logits = model.forward(sources(), targets_in()).logits;
    auto sums = Loss(torch::kCPU, 0.0)(logits, targets_out());
    optimizer.zero_grad();
    (sums.loss / 8.0).backward();
    optimizer.step();
    loss_per_token = sums.nll.item<double>() / 8.0;
  }
  CHECK(loss_per_token < 0.05);
}

}  // namespace nmt::test
