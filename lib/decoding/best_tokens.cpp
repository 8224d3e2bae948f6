#include "nmt/decoding/best_tokens.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "nmt/base/error.h"
#include "nmt/kernels/vector_math.h"
#include "search_internal.h"

namespace nmt {
namespace {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

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

// The scan reads host memory: scores elsewhere mean the search decided for another device.
void require_cpu_scores(const torch::Tensor& values) {
  if (!values.device().is_cpu())
    throw Error("search: the CPU best-tokens kernel was chosen but the scores are on " + values.device().str());
}

}  // namespace

KernelChoice best_tokens_kernel_for(const c10::Device& device) { return kernel_choice_for(device); }

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
  return log_probs_of(scores, tokens, best_tokens_kernel_for(scores.values().device()));
}

std::vector<float> log_probs_of(const NextTokenScores& scores, const std::vector<int64_t>& tokens,
                                KernelChoice kernel) {
  const auto& values = scores.values();
  if (values.dim() != 2 || values.size(0) != static_cast<int64_t>(tokens.size()))
    throw Error("search: " + std::to_string(tokens.size()) + " tokens to score against scores shaped " +
                std::to_string(values.dim()) + "-d with " + std::to_string(values.dim() > 0 ? values.size(0) : 0) + " rows");
  const int64_t vocab = values.size(1);
  for (const int64_t token : tokens)
    if (token < 0 || token >= vocab)
      throw Error("search: token " + std::to_string(token) + " is outside the vocabulary of " + std::to_string(vocab));
  if (kernel == KernelChoice::torch_ops)
    return search_detail::to_float_vector(scores.log_probs().gather(1, search_detail::to_tensor(tokens, values.device()).unsqueeze(1)).squeeze(1));
  require_cpu_scores(values);
  const auto rows = values.to(torch::kFloat).contiguous();
  std::vector<float> result(tokens.size());
  for (size_t r = 0; r < tokens.size(); ++r) {
    const float* x = rows.data_ptr<float>() + static_cast<int64_t>(r) * vocab;
    const float value = x[tokens[r]];
    if (scores.normalised()) {
      result[r] = value;
    } else {
      const float max = max_and_sum(x, vocab).max;
      result[r] = (value - max) - log_sum_exp_shifted(x, vocab, max);
    }
  }
  return result;
}

BestTokens best_tokens(const NextTokenScores& scores, int64_t k, const ForbiddenTokens& forbidden) {
  return best_tokens(scores, k, forbidden, best_tokens_kernel_for(scores.values().device()));
}

BestTokens best_tokens(const NextTokenScores& scores, int64_t k, const ForbiddenTokens& forbidden,
                       KernelChoice kernel) {
  const auto& values = scores.values();
  if (values.dim() != 2 || k < 1 || k > values.size(1))
    throw Error("search: the " + std::to_string(k) + " best tokens asked of scores shaped " +
                std::to_string(values.dim()) + "-d with " + std::to_string(values.dim() == 2 ? values.size(1) : 0) +
                " columns");
  if (static_cast<int64_t>(forbidden.only.size()) != values.size(0))
    throw Error("search: forbidden tokens for " + std::to_string(forbidden.only.size()) + " rows, scores for " +
                std::to_string(values.size(0)));
  if (kernel == KernelChoice::torch_ops) return with_torch(scores, k, forbidden);
  require_cpu_scores(values);
  return scan_best_tokens(values.to(torch::kFloat).contiguous(), scores.normalised(), k, forbidden);
}

}  // namespace nmt
