#include "nmt/kernels/best_tokens_scan.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "nmt/kernels/isa_versions.h"
#include "nmt/kernels/vector_math.h"

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
NMT_KERNEL_TABLE_ENTRY("best tokens", "LibTorch's log_softmax and topk (a search over a model not on the CPU)",
                       scan_row_widest)

// A row with one token allowed: that token, the rest -inf.
void only_token(const float* x, int64_t token, const ForbiddenTokens& forbidden, int64_t row, Leaders& leaders) {
  if (forbidden.allows(row, token) && x[token] > kNegativeInfinity) leaders.offer(x[token], token);
}


}  // namespace

BestTokens scan_best_tokens(const torch::Tensor& values, bool normalised, int64_t k, const ForbiddenTokens& forbidden) {
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
        best.log_sum[r] = log_sum_exp_shifted(x, vocab, max);
      }
      for (int64_t i = 0; i < k; ++i) chosen[i] = best.log_prob(r, chosen[i]);
    }
  });
  return best;
}

bool ForbiddenTokens::allows(int64_t row, int64_t token) const {
  const int64_t allowed = only[static_cast<size_t>(row)];
  if (allowed >= 0 && token != allowed) return false;
  return std::find(everywhere.begin(), everywhere.end(), token) == everywhere.end();
}

float log_sum_exp_shifted(const float* x, int64_t n, float max) { return std::log(sum_exp(x, n, max)); }

}  // namespace nmt
