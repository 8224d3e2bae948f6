#pragma once
// A step's best continuations per row, read from CPU scores without writing the [rows, V]
// log-softmax: per row one pass finds the largest value and the k best allowed tokens (a
// vector compare against the k-th best, rare insertions), and one pass sums the
// exponentials; only the k chosen values become log-probs. decoding/best_tokens.h takes
// any scores and device.
#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace nmt {

/// The continuations a step forbids: tokens no row may take (a search forbids pad and bos
/// always, eos before min_length), and per row at most one token allowed (a search: eos at
/// the row's length limit, the prefix's next token inside a prefix), which is itself
/// forbidden if it is among the former.
struct ForbiddenTokens {
  std::vector<int64_t> everywhere;
  std::vector<int64_t> only;  ///< per row: the one token allowed, or -1 for any

  bool allows(int64_t row, int64_t token) const;
};

/// Per row, the k best allowed tokens, best first (the lower id first among equal scores),
/// with their log-probs normalised over the whole vocabulary, allowed or not. A row with
/// fewer than k allowed tokens of finite score fills its last places with token 0 at -inf.
struct BestTokens {
  int64_t k = 0;
  std::vector<int64_t> tokens;   ///< [rows * k]
  std::vector<float> log_probs;  ///< [rows * k]
  /// Per row: log-prob = (value - shift) - log_sum, value an entry of the scores.
  std::vector<float> shift, log_sum;

  float log_prob(int64_t row, float value) const { return (value - shift[row]) - log_sum[row]; }
};

/// best_tokens for values [rows, V] fp32, contiguous, on the CPU; `normalised`: the values
/// are log-probs already (shift and log_sum stay 0). 1 <= k <= V, forbidden.only has a
/// row for every row.
BestTokens scan_best_tokens(const torch::Tensor& values, bool normalised, int64_t k, const ForbiddenTokens& forbidden);

/// log(sum of exp(x[j] - max) over x[0, n)): with max the row's largest value, log-prob =
/// (x - max) - log_sum.
float log_sum_exp_shifted(const float* x, int64_t n, float max);

}  // namespace nmt
