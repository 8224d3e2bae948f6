#include "nmt/decoding/best_tokens.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "nmt/base/cpu_features.h"
#include "nmt/base/error.h"
#include "nmt/base/vector_math.h"
#include "search_internal.h"

namespace nmt {
namespace {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();
constexpr int kCompareLanes = 16;  // elements compared at once: lanes the compiler can vectorise

// The k best (value, token) pairs seen so far, best first; ties keep the earlier token.
class Leaders {
 public:
  Leaders(float* values, int64_t* tokens, int64_t k) : values_(values), tokens_(tokens), k_(k) {
    std::fill(values_, values_ + k_, kNegativeInfinity);
    std::fill(tokens_, tokens_ + k_, 0);
  }
  // Values must beat this to enter: the k-th best, -inf while fewer than k are in.
  float threshold() const { return values_[k_ - 1]; }
  void offer(float value, int64_t token) {
    int64_t place = k_ - 1;
    while (place > 0 && value > values_[place - 1]) {
      values_[place] = values_[place - 1];
      tokens_[place] = tokens_[place - 1];
      --place;
    }
    values_[place] = value;
    tokens_[place] = token;
  }

 private:
  float* values_;
  int64_t* tokens_;
  int64_t k_;
};

// One row: its largest value, and its k best allowed tokens into `leaders`. The vector
// loop only compares; a block with a value above the threshold is offered element by
// element (after the first few hundred tokens that is rare).
inline __attribute__((always_inline)) float scan_row_body(const float* x, int64_t n, const ForbiddenTokens& forbidden,
                                                          int64_t row, Leaders& leaders) {
  float max_lane[kCompareLanes];
  std::fill(max_lane, max_lane + kCompareLanes, kNegativeInfinity);
  auto offer_range = [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j)
      if (x[j] > leaders.threshold() && forbidden.allows(row, j)) leaders.offer(x[j], j);
  };
  int64_t j = 0;
  for (; j + kCompareLanes <= n; j += kCompareLanes) {
    const float threshold = leaders.threshold();
    int above = 0;
    for (int l = 0; l < kCompareLanes; ++l) {
      max_lane[l] = std::max(max_lane[l], x[j + l]);
      above |= x[j + l] > threshold;
    }
    if (above) offer_range(j, j + kCompareLanes);
  }
  float max = kNegativeInfinity;
  for (int64_t t = j; t < n; ++t) max = std::max(max, x[t]);
  offer_range(j, n);
  for (float m : max_lane) max = std::max(max, m);
  return max;
}
NMT_ISA_VERSIONS(scan_row, scan_row_body)

// A row with one token allowed: that token, the rest -inf.
void only_token(const float* x, int64_t token, const ForbiddenTokens& forbidden, int64_t row, Leaders& leaders) {
  if (forbidden.allows(row, token) && x[token] > kNegativeInfinity) leaders.offer(x[token], token);
}

// log_sum of a row of logits whose largest value is max: log-prob = (x - max) - log_sum.
float log_sum(const float* x, int64_t n, float max) { return std::log(sum_exp(x, n, max)); }

BestTokens on_cpu(const torch::Tensor& values, bool normalised, int64_t k, const ForbiddenTokens& forbidden) {
  const int64_t rows = values.size(0), vocab = values.size(1);
  BestTokens best;
  best.k = k;
  best.tokens.resize(static_cast<size_t>(rows * k));
  best.log_probs.resize(static_cast<size_t>(rows * k));
  best.shift.assign(static_cast<size_t>(rows), 0.0f);
  best.log_sum.assign(static_cast<size_t>(rows), 0.0f);
  const float* data = values.data_ptr<float>();
  at::parallel_for(0, rows, 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* x = data + r * vocab;
      float* chosen = best.log_probs.data() + r * k;
      Leaders leaders(chosen, best.tokens.data() + r * k, k);
      const int64_t only = forbidden.only[static_cast<size_t>(r)];
      float max = 0;
      if (only >= 0) {
        only_token(x, only, forbidden, r, leaders);
        if (!normalised) max = max_and_sum(x, vocab).max;
      } else {
        max = scan_row(x, vocab, forbidden, r, leaders);
      }
      if (!normalised) {
        best.shift[r] = max;
        best.log_sum[r] = log_sum(x, vocab, max);
      }
      for (int64_t i = 0; i < k; ++i) chosen[i] = best.log_prob(r, chosen[i]);
    }
  });
  return best;
}

// Any device: LibTorch's own operations, the small results copied to the host.
BestTokens with_torch(const NextTokenScores& scores, int64_t k, const ForbiddenTokens& forbidden) {
  auto log_probs = scores.log_probs().to(torch::kFloat);
  const auto shift = scores.normalised() ? torch::zeros({log_probs.size(0)}, log_probs.options())
                                         : torch::logsumexp(scores.values().to(torch::kFloat), 1);
  mask_forbidden(log_probs, forbidden);
  const auto top = log_probs.topk(k, 1, true, true);
  BestTokens best;
  best.k = k;
  best.log_probs = search_detail::to_float_vector(std::get<0>(top));
  best.tokens = search_detail::to_int64_vector(std::get<1>(top));
  best.shift = search_detail::to_float_vector(shift);
  best.log_sum.assign(best.shift.size(), 0.0f);
  return best;
}

}  // namespace

bool ForbiddenTokens::allows(int64_t row, int64_t token) const {
  const int64_t allowed = only[static_cast<size_t>(row)];
  if (allowed >= 0 && token != allowed) return false;
  return std::find(everywhere.begin(), everywhere.end(), token) == everywhere.end();
}

void mask_forbidden(torch::Tensor& scores, const ForbiddenTokens& forbidden) {
  for (const int64_t token : forbidden.everywhere) scores.select(1, token).fill_(kNegativeInfinity);
  if (std::all_of(forbidden.only.begin(), forbidden.only.end(), [](int64_t t) { return t < 0; })) return;
  const auto tokens = search_detail::to_tensor(forbidden.only, scores.device());
  const auto restricted = tokens.ge(0).unsqueeze(1);
  const auto kept = tokens.clamp_min(0).unsqueeze(1);
  const auto values = scores.gather(1, kept);
  scores.masked_fill_(restricted, kNegativeInfinity);
  scores.scatter_(1, kept, values);
}

std::vector<float> log_probs_of(const NextTokenScores& scores, const std::vector<int64_t>& tokens) {
  const auto& values = scores.values();
  if (values.dim() != 2 || values.size(0) != static_cast<int64_t>(tokens.size()))
    throw Error("search: " + std::to_string(tokens.size()) + " tokens to score against scores shaped " +
                std::to_string(values.dim()) + "-d with " + std::to_string(values.dim() > 0 ? values.size(0) : 0) + " rows");
  const int64_t vocab = values.size(1);
  for (const int64_t token : tokens)
    if (token < 0 || token >= vocab)
      throw Error("search: token " + std::to_string(token) + " is outside the vocabulary of " + std::to_string(vocab));
  if (!values.device().is_cpu())
    return search_detail::to_float_vector(scores.log_probs().gather(1, search_detail::to_tensor(tokens, values.device()).unsqueeze(1)).squeeze(1));
  const auto rows = values.to(torch::kFloat).contiguous();
  std::vector<float> result(tokens.size());
  for (size_t r = 0; r < tokens.size(); ++r) {
    const float* x = rows.data_ptr<float>() + static_cast<int64_t>(r) * vocab;
    const float value = x[tokens[r]];
    if (scores.normalised()) {
      result[r] = value;
    } else {
      const float max = max_and_sum(x, vocab).max;
      result[r] = (value - max) - log_sum(x, vocab, max);
    }
  }
  return result;
}

BestTokens best_tokens(const NextTokenScores& scores, int64_t k, const ForbiddenTokens& forbidden) {
  const auto& values = scores.values();
  if (values.dim() != 2 || k < 1 || k > values.size(1))
    throw Error("search: the " + std::to_string(k) + " best tokens asked of scores shaped " +
                std::to_string(values.dim()) + "-d with " + std::to_string(values.dim() == 2 ? values.size(1) : 0) +
                " columns");
  if (static_cast<int64_t>(forbidden.only.size()) != values.size(0))
    throw Error("search: forbidden tokens for " + std::to_string(forbidden.only.size()) + " rows, scores for " +
                std::to_string(values.size(0)));
  if (!values.device().is_cpu()) return with_torch(scores, k, forbidden);
  return on_cpu(values.to(torch::kFloat).contiguous(), scores.normalised(), k, forbidden);
}

}  // namespace nmt
