#pragma once
// A step's best continuations per row, read from the model's scores: on the CPU without
// writing the [rows, V] log-softmax (kernels/best_tokens_scan.h), elsewhere through
// LibTorch's log_softmax and topk.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "nmt/kernels/best_tokens_scan.h"
#include "nmt/kernels/kernel_choice.h"
#include "nmt/models/next_token_scores.h"

namespace nmt {

/// Sets the forbidden entries of scores [rows, V] to -inf, in place.
void mask_forbidden(torch::Tensor& scores, const ForbiddenTokens& forbidden);

/// The kernel a search over a model on `device` reads its scores with, decided once where
/// the search starts: the scan (any dtype, converted to fp32) on the CPU, LibTorch's
/// log_softmax and topk elsewhere (CUDA).
KernelChoice best_tokens_kernel_for(const c10::Device& device);

/// scores [rows, V] by `kernel` (best_tokens_kernel_for the model's device): cpu_fp32
/// reads CPU memory (nmt::Error for scores elsewhere); torch_ops LibTorch's log_softmax
/// and topk on any device, with the same choices; 1 <= k <= V.
BestTokens best_tokens(const NextTokenScores& scores, int64_t k, const ForbiddenTokens& forbidden,
                       KernelChoice kernel);
/// best_tokens with the kernel for the scores' own device.
BestTokens best_tokens(const NextTokenScores& scores, int64_t k, const ForbiddenTokens& forbidden);

/// Per row, the log-prob of tokens[row] (any token, forbidden or not), normalised as
/// best_tokens normalises: a forced decoding scores a translation as the search did.
std::vector<float> log_probs_of(const NextTokenScores& scores, const std::vector<int64_t>& tokens,
                                KernelChoice kernel);
std::vector<float> log_probs_of(const NextTokenScores& scores, const std::vector<int64_t>& tokens);

}  // namespace nmt
