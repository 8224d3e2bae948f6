// best_tokens against the long way round: LibTorch's log_softmax in double, the forbidden
// entries set to -inf, and a stable sort of every row.
#include "support/catch.h"
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "nmt/base/error.h"
#include "nmt/decoding/best_tokens.h"

using namespace nmt;

namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

struct Expected {
  std::vector<int64_t> tokens;
  std::vector<double> log_probs;
};

// Per row: every allowed token of finite score, by score (lower id first among equals),
// the first k, then token 0 at -inf up to k.
Expected reference(const torch::Tensor& logits, int64_t k, const ForbiddenTokens& forbidden) {
  const auto log_probs = torch::log_softmax(logits.to(torch::kDouble), 1).contiguous();
  Expected expected;
  for (int64_t r = 0; r < logits.size(0); ++r) {
    const double* row = log_probs.data_ptr<double>() + r * logits.size(1);
    std::vector<int64_t> order;
    for (int64_t t = 0; t < logits.size(1); ++t)
      if (forbidden.allows(r, t) && std::isfinite(row[t])) order.push_back(t);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
    for (int64_t i = 0; i < k; ++i) {
      const bool filled = i < static_cast<int64_t>(order.size());
      expected.tokens.push_back(filled ? order[i] : 0);
      expected.log_probs.push_back(filled ? row[order[i]] : -INFINITY);
    }
  }
  return expected;
}

void check_matches(const BestTokens& best, const Expected& expected) {
  REQUIRE(best.tokens.size() == expected.tokens.size());
  CHECK(best.tokens == expected.tokens);
  for (size_t i = 0; i < expected.log_probs.size(); ++i) {
    INFO("entry " << i);
    if (std::isinf(expected.log_probs[i])) CHECK(best.log_probs[i] == kMinusInfinity);
    else CHECK(best.log_probs[i] == Approx(expected.log_probs[i]).margin(2e-6));
  }
}

ForbiddenTokens none(int64_t rows) { return {{}, std::vector<int64_t>(static_cast<size_t>(rows), -1)}; }

}  // namespace

TEST_CASE("best_tokens gives each row's best tokens and their log-probs", "[search][best_tokens]") {
  torch::manual_seed(3);
  // 8000 like a real vocabulary, 37 to end off the vector lanes, 5 smaller than 2 * k.
  for (const int64_t vocab : {8000, 37, 5}) {
    for (const int64_t k : {1, 3, 10}) {
      if (k > vocab) continue;
      DYNAMIC_SECTION("vocabulary " << vocab << ", k " << k) {
        auto logits = torch::randn({13, vocab}) * 4 + torch::arange(13).unsqueeze(1);
        check_matches(best_tokens(NextTokenScores::logits(logits), k, none(13)), reference(logits, k, none(13)));
      }
    }
  }
}

TEST_CASE("best_tokens breaks ties by the lower id, as a stable sort does", "[search][best_tokens]") {
  // Rounded logits: many equal values, also at the k-th place.
  torch::manual_seed(4);
  auto logits = (torch::randn({6, 300}) * 2).round();
  logits[1].fill_(1.5);  // one row all equal
  check_matches(best_tokens(NextTokenScores::logits(logits), 10, none(6)), reference(logits, 10, none(6)));
}

TEST_CASE("best_tokens leaves out forbidden tokens but normalises over all of them", "[search][best_tokens]") {
  torch::manual_seed(5);
  auto logits = torch::randn({5, 40});
  logits.select(1, 0).fill_(9);  // the forbidden ones are the best, so leaving them out shows
  logits.select(1, 2).fill_(8);
  logits[4].fill_(kMinusInfinity);
  logits[4][7] = 0.5;  // one finite token only: the rest of its places are filled with -inf
  ForbiddenTokens forbidden{{0, 2}, {-1, 6, 2, -1, -1}};  // row 1: token 6 only; row 2: only a forbidden one
  const auto best = best_tokens(NextTokenScores::logits(logits), 4, forbidden);
  check_matches(best, reference(logits, 4, forbidden));
  CHECK(best.tokens[4] == 6);  // row 1
  CHECK(best.log_probs[5] == kMinusInfinity);
  for (int i = 8; i < 12; ++i) CHECK(best.log_probs[i] == kMinusInfinity);  // row 2: nothing allowed
  CHECK(best.tokens[16] == 7);
  // The log-prob of any entry, by the same normalisation.
  CHECK(best.log_prob(0, logits[0][0].item<float>()) == Approx(torch::log_softmax(logits[0], 0)[0].item<float>()).margin(1e-6));
}

TEST_CASE("best_tokens takes normalised scores as they are, and other dtypes and layouts", "[search][best_tokens]") {
  torch::manual_seed(6);
  const auto logits = torch::randn({7, 100});
  const auto log_probs = torch::log_softmax(logits, 1);
  const auto from_log_probs = best_tokens(NextTokenScores::log_probs(log_probs), 5, none(7));
  const auto expected = reference(logits, 5, none(7));
  CHECK(from_log_probs.tokens == expected.tokens);
  for (size_t i = 0; i < expected.tokens.size(); ++i) {
    const auto row = static_cast<int64_t>(i / 5);
    CHECK(from_log_probs.log_probs[i] == log_probs[row][expected.tokens[i]].item<float>());  // untouched
  }
  // A transposed view and double values read as the contiguous float rows would be.
  const auto transposed = logits.t().contiguous().t();
  check_matches(best_tokens(NextTokenScores::logits(transposed), 5, none(7)), expected);
  check_matches(best_tokens(NextTokenScores::logits(logits.to(torch::kDouble)), 5, none(7)), expected);
}

TEST_CASE("log_probs_of scores given tokens as best_tokens does", "[search][best_tokens]") {
  torch::manual_seed(7);
  const auto logits = torch::randn({4, 8000}) * 3;
  const auto best = best_tokens(NextTokenScores::logits(logits), 2, none(4));
  const std::vector<int64_t> top{best.tokens[0], best.tokens[2], best.tokens[4], best.tokens[6]};
  const auto scored = log_probs_of(NextTokenScores::logits(logits), top);
  for (size_t r = 0; r < 4; ++r) CHECK(scored[r] == best.log_probs[r * 2]);  // the same numbers, not close ones
  const auto reference_log_probs = torch::log_softmax(logits, 1);
  const std::vector<int64_t> any{0, 17, 7999, 3};
  const auto picked = log_probs_of(NextTokenScores::logits(logits), any);
  for (size_t r = 0; r < 4; ++r)
    CHECK(picked[r] == Approx(reference_log_probs[static_cast<int64_t>(r)][any[r]].item<float>()).margin(2e-6));
  CHECK_THROWS_AS(log_probs_of(NextTokenScores::logits(logits), {0, 1, 2}), Error);
  CHECK_THROWS_AS(log_probs_of(NextTokenScores::logits(logits), {0, 1, 2, 8000}), Error);
}

TEST_CASE("best_tokens refuses what it cannot answer", "[search][best_tokens]") {
  const auto logits = torch::randn({3, 10});
  CHECK_THROWS_AS(best_tokens(NextTokenScores::logits(logits), 0, none(3)), Error);
  CHECK_THROWS_AS(best_tokens(NextTokenScores::logits(logits), 11, none(3)), Error);
  CHECK_THROWS_AS(best_tokens(NextTokenScores::logits(logits), 2, none(2)), Error);
  CHECK_THROWS_AS(best_tokens(NextTokenScores::logits(torch::randn({10})), 2, none(3)), Error);
}

TEST_CASE("a search on a CUDA model reads its scores with LibTorch's operations", "[search][device]") {
  CHECK(best_tokens_kernel_for(c10::Device(c10::kCPU)) == KernelChoice::cpu_fp32);
  CHECK(best_tokens_kernel_for(c10::Device(c10::kCUDA)) == KernelChoice::torch_ops);
  // Both kernels choose the same tokens (here both on CPU scores).
  torch::manual_seed(9);
  const auto logits = torch::randn({3, 50});
  nmt::ForbiddenTokens none;
  none.only.assign(3, -1);
  const auto scan = best_tokens(NextTokenScores::logits(logits), 4, none, KernelChoice::cpu_fp32);
  const auto torch_ops = best_tokens(NextTokenScores::logits(logits), 4, none, KernelChoice::torch_ops);
  CHECK(scan.tokens == torch_ops.tokens);
}
