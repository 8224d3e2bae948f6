#pragma once
// A step's best continuations per row, read from the model's scores without writing the
// [rows, V] log-softmax: per row one pass finds the largest value and the k best allowed
// tokens (a vector compare against the k-th best, rare insertions), and one pass sums
// the exponentials; only the k chosen values become log-probs.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "nmt/models/next_token_scores.h"

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

/// Sets the forbidden entries of scores [rows, V] to -inf, in place.
void mask_forbidden(torch::Tensor& scores, const ForbiddenTokens& forbidden);

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

/// scores [rows, V] on any device (the fast path reads CPU memory; elsewhere LibTorch's
/// log_softmax and topk give the same choices); 1 <= k <= V.
BestTokens best_tokens(const NextTokenScores& scores, int64_t k, const ForbiddenTokens& forbidden);

/// Per row, the log-prob of tokens[row] (any token, forbidden or not), normalised as
/// best_tokens normalises: a forced decoding scores a translation as the search did.
std::vector<float> log_probs_of(const NextTokenScores& scores, const std::vector<int64_t>& tokens);

}  // namespace nmt
