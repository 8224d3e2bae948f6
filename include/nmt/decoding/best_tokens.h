#pragma once
// A step's best continuations per row, read from the model's scores: on the CPU without
// writing the [rows, V] log-softmax (kernels/best_tokens_scan.h), elsewhere through
// LibTorch's log_softmax and topk.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "nmt/kernels/best_tokens_scan.h"
#include "nmt/models/next_token_scores.h"

namespace nmt {

/// Sets the forbidden entries of scores [rows, V] to -inf, in place.
void mask_forbidden(torch::Tensor& scores, const ForbiddenTokens& forbidden);

/// scores [rows, V] on any device (the fast path reads CPU memory; elsewhere LibTorch's
/// log_softmax and topk give the same choices); 1 <= k <= V.
BestTokens best_tokens(const NextTokenScores& scores, int64_t k, const ForbiddenTokens& forbidden);

/// Per row, the log-prob of tokens[row] (any token, forbidden or not), normalised as
/// best_tokens normalises: a forced decoding scores a translation as the search did.
std::vector<float> log_probs_of(const NextTokenScores& scores, const std::vector<int64_t>& tokens);

}  // namespace nmt
