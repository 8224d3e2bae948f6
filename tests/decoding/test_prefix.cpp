// Prefix-constrained decoding: every hypothesis of every strategy starts with its row's
// prefix, the search goes on freely after it, and a hypothesis's score is the model's
// log-prob of all its tokens, prefix included (forced decoding gives the same).
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/decoding/strategy.h"
#include "nmt/text/tokenizer.h"
#include "support/fake_seq2seq.h"

using namespace nmt;
using test::FakeSeq2Seq;

namespace {

bool starts_with(const std::vector<int>& tokens, const std::vector<int>& prefix) {
  return tokens.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), tokens.begin());
}

}  // namespace

TEST_CASE("every strategy's hypotheses start with the row's prefix", "[search][prefix]") {
  FakeSeq2Seq model(7, true);
  const auto source = torch::tensor({{4, 5, 6, 3}, {5, 5, 3, 0}, {6, 4, 3, 0}});
  const std::vector<std::vector<int>> prefixes = {{6, 6, 1}, {}, {5}};
  for (const std::string strategy : {"greedy", "beam", "sample"}) {
    SearchOptions options;
    options.strategy = strategy;
    options.beam = strategy == "greedy" ? 1 : 4;
    options.nbest = strategy == "greedy" ? 1 : 3;
    options.alpha = 0;
    SearchGuides guides;
    guides.prefixes = prefixes;
    options.max_length_ratio = 0;  // a limit of 2 tokens: the 3-token prefix raises it
    options.max_length_extra = 2;
    const auto results = search(model, source, options, guides);
    for (size_t b = 0; b < 3; ++b) {
      REQUIRE(!results[b].empty());
      for (const auto& h : results[b]) {
        INFO(strategy << " row " << b);
        CHECK(starts_with(h.tokens, prefixes[b]));
        if (!h.finished) continue;
        const auto row = source[static_cast<int64_t>(b)];
        const auto alone = row.narrow(0, 0, row.ne(0).sum().item<int64_t>()).unsqueeze(0);
        CHECK(h.log_prob == Approx(force_decode(model, alone, h.tokens, false).log_prob).margin(1e-4));
      }
    }
  }
}

TEST_CASE("a prefix changes nothing but the start: without one, the search is unchanged", "[search][prefix]") {
  FakeSeq2Seq model(7, true);
  const auto source = torch::tensor({{4, 5, 6, 3}, {5, 5, 3, 0}});
  SearchOptions options;
  options.beam = 4;
  options.nbest = 2;
  const auto plain = beam_search(model, source, options);
  SearchGuides guides;
  guides.prefixes = {{}, {}};
  const auto empty_prefixes = beam_search(model, source, options, guides);
  for (size_t b = 0; b < 2; ++b)
    for (size_t k = 0; k < 2; ++k) {
      CHECK(empty_prefixes[b][k].tokens == plain[b][k].tokens);
      CHECK(empty_prefixes[b][k].score == plain[b][k].score);
    }
  // The best hypothesis's own start as a prefix: beam search finds that hypothesis again.
  guides.prefixes = {{plain[0][0].tokens.begin(), plain[0][0].tokens.begin() + 1}, {}};
  const auto forced = beam_search(model, source, options, guides);
  CHECK(forced[0][0].tokens == plain[0][0].tokens);
  CHECK(forced[0][0].score == Approx(plain[0][0].score));
}

TEST_CASE("prefixes are checked", "[search][prefix]") {
  FakeSeq2Seq model;
  const auto source = torch::tensor({{4, 5, 6, 3}});
  SearchOptions options;
  SearchGuides guides;
  guides.prefixes = {{4}, {5}};
  CHECK_THROWS_WITH(beam_search(model, source, options, guides), HasSubstring("2 prefixes for 1 source rows"));
  guides.prefixes = {{4, SpecialIds::kEos}};
  CHECK_THROWS_WITH(beam_search(model, source, options, guides), HasSubstring("special token 3"));
}
