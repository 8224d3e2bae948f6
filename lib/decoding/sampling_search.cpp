// Random sampling: greedy search's loop with the argmax replaced by a draw from the
// tempered, top-k and top-p filtered distribution. The draws come from a counter-based
// generator keyed by (seed, line number, sample index, step), not from a generator that
// advances with every row, so a line's samples do not depend on what it is batched with.
#include <torch/torch.h>

#include <algorithm>
#include <limits>

#include "nmt/base/error.h"
#include "nmt/decoding/search.h"
#include "search_internal.h"

namespace nmt {
namespace {

// splitmix64's finaliser: a bijection on 64 bits that spreads every input bit.
uint64_t mix_bits(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int64_t random_stream(uint64_t seed, int64_t line, int64_t sample) {
  const uint64_t key = mix_bits(mix_bits(seed ^ mix_bits(static_cast<uint64_t>(line))) ^ static_cast<uint64_t>(sample));
  return static_cast<int64_t>(key);
}

// Uniform in [0, 1): the draw of `stream` at `step`.
double uniform_draw(int64_t stream, int64_t step) {
  const uint64_t bits = mix_bits(static_cast<uint64_t>(stream) ^ mix_bits(static_cast<uint64_t>(step) + 1));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

class TokenSampler {
 public:
  explicit TokenSampler(const SamplingOptions& options) : options_(options) {}

  search_detail::RowChoice operator()(const NextTokenScores& step_scores, const ForbiddenTokens& forbidden,
                                      const std::vector<int64_t>& streams, int64_t step) const {
    auto scores = step_scores.log_probs().to(torch::kFloat);
    mask_forbidden(scores, forbidden);
    const int64_t vocab = scores.size(1);
    auto logits = scores / options_.temperature;
    if (options_.top_k > 0 && options_.top_k < vocab) {
      const auto kth = std::get<0>(logits.topk(options_.top_k, 1, true, true)).select(1, options_.top_k - 1);
      logits = logits.masked_fill(logits < kth.unsqueeze(1), -std::numeric_limits<float>::infinity());
    }
    const auto sorted = logits.sort(1, /*descending=*/true);
    auto probs = torch::softmax(std::get<0>(sorted), 1);  // NaN in a row where nothing is allowed
    if (options_.top_p < 1) {
      const auto more_probable_mass = probs.cumsum(1) - probs;
      probs = probs.masked_fill(more_probable_mass >= options_.top_p, 0);
    }
    const auto cumulative = probs.cumsum(1);
    std::vector<float> draws;
    for (const auto stream : streams) draws.push_back(static_cast<float>(uniform_draw(stream, step)));
    const auto target = search_detail::to_tensor(draws, scores.device()).unsqueeze(1) * cumulative.narrow(1, vocab - 1, 1);
    // The first token whose cumulative mass passes the target; rounding can only push past
    // the last token kept, so the position is capped there.
    const auto kept = probs.gt(0).sum(1, /*keepdim=*/true);
    const auto position = torch::minimum(cumulative.lt(target).sum(1, true), (kept - 1).clamp_min(0));
    const auto tokens = std::get<1>(sorted).gather(1, position);
    return {search_detail::to_int64_vector(tokens.squeeze(1)),
            search_detail::to_float_vector(scores.gather(1, tokens).squeeze(1))};
  }

 private:
  SamplingOptions options_;
};

}  // namespace

std::vector<std::vector<Hypothesis>> sampling_search(Seq2SeqModel& model, const torch::Tensor& source,
                                                     const SearchOptions& options, const SearchGuides& guides) {
  options.validate();
  search_detail::describe_source(source, options, guides);  // the shape checks, before indexing
  const int64_t lines = source.size(0), samples = options.nbest;
  if (!guides.line_numbers.empty() && static_cast<int64_t>(guides.line_numbers.size()) != lines)
    throw Error("sampling: " + std::to_string(guides.line_numbers.size()) + " line numbers for " +
                std::to_string(lines) + " source rows");
  std::vector<int64_t> streams;
  for (int64_t b = 0; b < lines; ++b) {
    const int64_t line = guides.line_numbers.empty() ? b : guides.line_numbers[static_cast<size_t>(b)];
    for (int64_t k = 0; k < samples; ++k) streams.push_back(random_stream(options.sampling.seed, line, k));
  }
  const auto rows = samples == 1 ? source : source.repeat_interleave(samples, 0);
  SearchGuides row_guides;  // the prefixes follow their rows
  for (const auto& prefix : guides.prefixes) row_guides.prefixes.insert(row_guides.prefixes.end(), samples, prefix);
  auto drawn = search_detail::single_path_search(model, rows, options, row_guides, streams, TokenSampler(options.sampling));
  std::vector<std::vector<Hypothesis>> results(static_cast<size_t>(lines));
  for (int64_t b = 0; b < lines; ++b) {
    auto& line = results[static_cast<size_t>(b)];
    for (int64_t k = 0; k < samples; ++k) line.push_back(std::move(drawn[static_cast<size_t>(b * samples + k)]));
    std::stable_sort(line.begin(), line.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  }
  return results;
}

}  // namespace nmt
