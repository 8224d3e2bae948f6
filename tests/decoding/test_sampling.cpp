// The sample strategy: it draws from the model's distribution (and from the tempered,
// top-k and top-p cut one), the same seed gives the same samples whatever the batching,
// and top-k 1 or a tiny top-p is greedy search.
#include "support/catch.h"
#include <torch/torch.h>

#include <cmath>
#include <map>

#include "nmt/base/error.h"
#include "nmt/decoding/strategy.h"
#include "nmt/text/tokenizer.h"
#include "support/fake_seq2seq.h"

using namespace nmt;
using test::FakeSeq2Seq;

namespace {

SearchOptions sampling_options(int samples, uint64_t seed = 11) {
  SearchOptions options;
  options.strategy = "sample";
  options.nbest = samples;
  options.alpha = 0;
  options.sampling.seed = seed;
  return options;
}

// The model's first-token distribution for `source_row`, renormalised over the tokens the
// searches allow at step 0 (all but pad and bos), with the sampling transforms applied.
std::map<int64_t, double> first_token_distribution(const std::vector<int64_t>& source_row, double temperature,
                                                   int top_k) {
  FakeSeq2Seq model;
  const auto key = FakeSeq2Seq::key_of(source_row);
  const auto hash = FakeSeq2Seq::next_hash(0, 0, SpecialIds::kBos);
  std::vector<std::pair<double, int64_t>> ranked;
  for (int64_t token = 0; token < FakeSeq2Seq::kVocab; ++token)
    if (token != SpecialIds::kPad && token != SpecialIds::kBos)
      ranked.emplace_back(model.log_prob(key, 0, SpecialIds::kBos, hash, token) / temperature, token);
  std::sort(ranked.rbegin(), ranked.rend());
  if (top_k > 0) ranked.resize(static_cast<size_t>(top_k));
  double total = 0;
  for (const auto& [logit, token] : ranked) total += std::exp(logit);
  std::map<int64_t, double> distribution;
  for (const auto& [logit, token] : ranked) distribution[token] = std::exp(logit) / total;
  return distribution;
}

// How often each first token (eos for an empty hypothesis) was drawn, as fractions.
std::map<int64_t, double> first_token_frequencies(const std::vector<Hypothesis>& samples) {
  std::map<int64_t, double> frequencies;
  for (const auto& h : samples) frequencies[h.tokens.empty() ? SpecialIds::kEos : h.tokens.front()] += 1.0 / samples.size();
  return frequencies;
}

void check_frequencies(const std::vector<Hypothesis>& samples, const std::map<int64_t, double>& expected) {
  const auto observed = first_token_frequencies(samples);
  for (const auto& [token, frequency] : observed) {
    INFO("token " << token << " drawn with frequency " << frequency);
    CHECK(expected.count(token) == 1);  // never a token outside the cut distribution
  }
  for (const auto& [token, p] : expected) {
    const double spread = std::sqrt(p * (1 - p) / static_cast<double>(samples.size()));
    const double got = observed.count(token) ? observed.at(token) : 0.0;
    INFO("token " << token << ": p " << p << ", drawn " << got);
    CHECK(std::abs(got - p) <= 4 * spread + 1e-9);
  }
}

}  // namespace

TEST_CASE("samples follow the model's distribution, tempered and cut", "[search][sampling]") {
  FakeSeq2Seq model(7, false);
  const std::vector<int64_t> row = {4, 5, 6, 3};
  const auto source = torch::tensor(row).unsqueeze(0);
  auto options = sampling_options(4000);
  check_frequencies(sampling_search(model, source, options)[0], first_token_distribution(row, 1.0, 0));
  options.sampling.temperature = 0.5;
  check_frequencies(sampling_search(model, source, options)[0], first_token_distribution(row, 0.5, 0));
  options.sampling.temperature = 1.0;
  options.sampling.top_k = 2;
  check_frequencies(sampling_search(model, source, options)[0], first_token_distribution(row, 1.0, 2));
}

TEST_CASE("a sample's score is the model's log-prob of its tokens, best first", "[search][sampling]") {
  FakeSeq2Seq model(7, false);
  const auto source = torch::tensor({{4, 5, 6, 3}});
  auto options = sampling_options(20);
  options.sampling.temperature = 2.0;  // the score stays the model's own, not the tempered one
  const auto samples = sampling_search(model, source, options)[0];
  REQUIRE(samples.size() == 20);
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& h = samples[i];
    if (i > 0) CHECK(h.score <= samples[i - 1].score);
    if (!h.finished) continue;
    const auto forced = force_decode(model, source, h.tokens, false);
    CHECK(h.log_prob == Approx(forced.log_prob).margin(1e-4));
    CHECK(h.score == Approx(h.log_prob).margin(1e-9));  // alpha 0
  }
}

TEST_CASE("the same seed gives the same samples, batched or one line at a time", "[search][sampling]") {
  FakeSeq2Seq model(7, false);
  const auto batch = torch::tensor({{4, 5, 6, 3}, {5, 5, 3, 0}, {6, 4, 3, 0}});
  auto options = sampling_options(3);
  SearchGuides guides;
  guides.line_numbers = {10, 11, 12};
  const auto together = sampling_search(model, batch, options, guides);
  CHECK(sampling_search(model, batch, options, guides)[1][2].tokens == together[1][2].tokens);
  for (int64_t b = 0; b < 3; ++b) {
    SearchGuides alone_guides;
    alone_guides.line_numbers = {10 + b};
    const auto row = batch[b].narrow(0, 0, batch[b].ne(0).sum().item<int64_t>()).unsqueeze(0);
    const auto alone = sampling_search(model, row, options, alone_guides)[0];
    for (size_t k = 0; k < 3; ++k) CHECK(alone[k].tokens == together[static_cast<size_t>(b)][k].tokens);
  }
  // Another seed draws other samples (in 3 lines x 3 samples, some differ).
  auto reseeded = options;
  reseeded.sampling.seed = 12;
  const auto other = sampling_search(model, batch, reseeded, guides);
  bool any_differs = false;
  for (size_t b = 0; b < 3; ++b)
    for (size_t k = 0; k < 3; ++k) any_differs = any_differs || other[b][k].tokens != together[b][k].tokens;
  CHECK(any_differs);
}

TEST_CASE("top-k 1 and a tiny top-p are greedy search", "[search][sampling]") {
  FakeSeq2Seq model(7, true);
  const auto source = torch::tensor({{4, 5, 6, 3}, {5, 5, 3, 0}, {6, 4, 3, 0}});
  SearchOptions greedy_options;
  greedy_options.beam = 1;
  greedy_options.keep_attention = true;
  const auto greedy = greedy_search(model, source, greedy_options);
  auto options = sampling_options(2);
  options.keep_attention = true;
  options.alpha = greedy_options.alpha;
  for (const bool by_k : {true, false}) {
    options.sampling.top_k = by_k ? 1 : 0;
    options.sampling.top_p = by_k ? 1.0 : 1e-6;
    options.sampling.temperature = 0.7;
    const auto sampled = search(model, source, options);
    for (size_t b = 0; b < 3; ++b)
      for (const auto& h : sampled[b]) {
        CHECK(h.tokens == greedy[b].tokens);
        CHECK(h.score == Approx(greedy[b].score).margin(1e-6));
        CHECK(torch::allclose(h.attention, greedy[b].attention));
      }
  }
}

TEST_CASE("sampling options are checked", "[search][sampling]") {
  FakeSeq2Seq model;
  const auto source = torch::tensor({{4, 5, 6, 3}});
  auto options = sampling_options(8);
  options.beam = 1;  // nbest is the number of samples: no beam needed
  CHECK_NOTHROW(sampling_search(model, source, options));
  options.sampling.top_p = 0;
  CHECK_THROWS_WITH(sampling_search(model, source, options), HasSubstring("top_p must be in (0, 1]"));
  options.sampling.top_p = 1;
  options.sampling.temperature = 0;
  CHECK_THROWS_WITH(sampling_search(model, source, options), HasSubstring("temperature must be finite and > 0"));
  options.sampling.temperature = 1;
  SearchGuides two_lines;
  two_lines.line_numbers = {1, 2};
  CHECK_THROWS_WITH(sampling_search(model, source, options, two_lines), HasSubstring("2 line numbers for 1 source rows"));
}
