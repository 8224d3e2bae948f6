// Search options, scoring and the small helpers every search shares.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "nmt/base/error.h"
#include "nmt/decoding/search.h"
#include "nmt/decoding/strategy.h"
#include "nmt/text/tokenizer.h"
#include "search_internal.h"

namespace nmt {
namespace {

template <typename T>
void require(bool ok, const char* field, const char* rule, T value) {
  if (ok) return;
  std::ostringstream message;
  message << "search option " << field << " must be " << rule << " (got " << value << ")";
  throw Error(message.str());
}

double length_penalty(int64_t length, double alpha) {
  return alpha == 0 ? 1.0 : std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

}  // namespace

void SearchOptions::validate() const {
  require(beam >= 1, "beam", ">= 1", beam);
  require(nbest >= 1, "nbest", ">= 1", nbest);
  if (!strategy_for(*this).draws_samples) require(nbest <= beam, "nbest", "<= beam", nbest);
  require(sampling.top_k >= 0, "sampling top_k", ">= 0", sampling.top_k);
  require(sampling.top_p > 0 && sampling.top_p <= 1, "sampling top_p", "in (0, 1]", sampling.top_p);
  require(std::isfinite(sampling.temperature) && sampling.temperature > 0, "sampling temperature",
          "finite and > 0", sampling.temperature);
  require(std::isfinite(alpha) && alpha >= 0, "alpha", "finite and >= 0", alpha);
  require(std::isfinite(coverage) && coverage >= 0, "coverage", "finite and >= 0", coverage);
  require(std::isfinite(max_length_ratio) && max_length_ratio >= 0, "max_length_ratio",
          "finite and >= 0", max_length_ratio);
  require(max_length_extra >= 0, "max_length_extra", ">= 0", max_length_extra);
  require(min_length >= 0, "min_length", ">= 0", min_length);
}

int64_t max_target_length(int64_t source_length, const SearchOptions& options) {
  return static_cast<int64_t>(
      std::floor(options.max_length_ratio * static_cast<double>(source_length))) +
         options.max_length_extra;
}

namespace search_detail {

std::vector<SourceInfo> describe_source(const torch::Tensor& source, const SearchOptions& options,
                                        const SearchGuides& guides) {
  if (!source.defined() || source.dim() != 2 || source.size(0) < 1 || source.size(1) < 1)
    throw Error("search: source must be a non-empty [B, S] tensor");
  if (source.scalar_type() != torch::kLong) throw Error("search: source must be int64");
  const auto positions = to_int64_vector(source.ne(SpecialIds::kPad).sum(1));
  if (!guides.prefixes.empty() && guides.prefixes.size() != positions.size())
    throw Error("search: " + std::to_string(guides.prefixes.size()) + " prefixes for " +
                std::to_string(positions.size()) + " source rows");
  if (!guides.constraints.empty() && guides.constraints.size() != positions.size())
    throw Error("search: constraints for " + std::to_string(guides.constraints.size()) + " lines, but " +
                std::to_string(positions.size()) + " source rows");
  std::vector<SourceInfo> info(positions.size());
  for (size_t b = 0; b < info.size(); ++b) {
    info[b].positions = positions[b];
    // The source length excludes its eos.
    info[b].max_length = max_target_length(std::max<int64_t>(positions[b] - 1, 0), options);
    if (!guides.constraints.empty()) {
      info[b].constraints = guides.constraints[b];
      for (const auto& phrase : info[b].constraints)
        for (const int token : phrase)
          if (token < 0 || token == SpecialIds::kPad || token == SpecialIds::kBos || token == SpecialIds::kEos)
            throw Error("search: a constraint holds the special token " + std::to_string(token));
    }
    if (guides.prefixes.empty()) continue;
    info[b].prefix = guides.prefixes[b];
    for (const int token : info[b].prefix)
      if (token < 0 || token == SpecialIds::kPad || token == SpecialIds::kBos || token == SpecialIds::kEos)
        throw Error("search: a prefix holds the special token " + std::to_string(token));
    info[b].max_length = std::max<int64_t>(info[b].max_length, static_cast<int64_t>(info[b].prefix.size()));
  }
  return info;
}

double hypothesis_score(double log_prob, int64_t length, const std::vector<float>& coverage,
                        const SearchOptions& options) {
  double score = log_prob / length_penalty(length, options.alpha);
  if (options.coverage > 0 && !coverage.empty()) {
    double penalty = 0;
    // A position that got no attention at all would make the penalty -inf; clamping
    // keeps scores comparable (it is still heavily penalised).
    for (float mass : coverage) penalty += std::log(std::clamp<double>(mass, 1e-10, 1.0));
    score += options.coverage * penalty;
  }
  return score;
}

double best_reachable_score(double log_prob, int64_t length, int64_t max_length,
                            const SearchOptions& options) {
  // A finished continuation has between length + 1 and max_length + 1 tokens (eos
  // included) and at most the current log-prob. The penalty is monotonic in the length,
  // so the best case is at one of the two ends.
  const double shortest = log_prob / length_penalty(length + 1, options.alpha);
  const double longest = log_prob / length_penalty(max_length + 1, options.alpha);
  return std::max(shortest, longest);
}

ForbiddenTokens forbidden_tokens(int64_t step, int min_length, const std::vector<SourceInfo>& sources,
                                 const std::vector<int64_t>& sentence_of_row, int64_t vocab) {
  ForbiddenTokens forbidden;
  forbidden.everywhere = {SpecialIds::kPad, SpecialIds::kBos};
  if (step < min_length) forbidden.everywhere.push_back(SpecialIds::kEos);
  for (const int64_t s : sentence_of_row) {
    const auto& source = sources[static_cast<size_t>(s)];
    int64_t token = -1;
    if (step < static_cast<int64_t>(source.prefix.size())) token = source.prefix[static_cast<size_t>(step)];
    else if (source.max_length == step) token = SpecialIds::kEos;
    if (token >= vocab)
      throw Error("search: prefix token " + std::to_string(token) + " is outside the vocabulary of " +
                  std::to_string(vocab));
    forbidden.only.push_back(token);
  }
  return forbidden;
}

torch::Tensor to_tensor(const std::vector<int64_t>& values, const torch::Device& device) {
  return torch::tensor(torch::ArrayRef<int64_t>(values), torch::kLong).to(device);
}

torch::Tensor to_tensor(const std::vector<float>& values, const torch::Device& device) {
  return torch::tensor(torch::ArrayRef<float>(values), torch::kFloat).to(device);
}

std::vector<int64_t> to_int64_vector(const torch::Tensor& tensor) {
  auto host = tensor.to(torch::kCPU, torch::kLong).contiguous();
  return {host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel()};
}

std::vector<float> to_float_vector(const torch::Tensor& tensor) {
  auto host = tensor.to(torch::kCPU, torch::kFloat).contiguous();
  return {host.data_ptr<float>(), host.data_ptr<float>() + host.numel()};
}

}  // namespace search_detail
}  // namespace nmt
