// Lexically constrained beam search: every hypothesis contains every phrase of its row,
// scores stay the model's log-probs, unconstrained rows of the same batch are unchanged,
// and a length limit too short for the phrases gives cut hypotheses, not an endless search.
#include "support/catch.h"
#include <torch/torch.h>

#include <algorithm>

#include "nmt/base/error.h"
#include "nmt/decoding/search.h"
#include "nmt/text/tokenizer.h"
#include "support/fake_seq2seq.h"

using namespace nmt;
using test::FakeSeq2Seq;

namespace {

bool contains_run(const std::vector<int>& tokens, const std::vector<int>& phrase) {
  return std::search(tokens.begin(), tokens.end(), phrase.begin(), phrase.end()) != tokens.end();
}

torch::Tensor row_alone(const torch::Tensor& source, int64_t b) {
  const auto row = source[b];
  return row.narrow(0, 0, row.ne(0).sum().item<int64_t>()).unsqueeze(0);
}

}  // namespace

TEST_CASE("every constrained hypothesis contains every phrase of its row", "[search][constraints]") {
  FakeSeq2Seq model(7, true);
  const auto source = torch::tensor({{4, 5, 6, 3}, {5, 5, 3, 0}, {6, 4, 3, 0}});
  SearchOptions options;
  options.beam = 5;
  options.nbest = 3;
  options.alpha = 0;
  const auto free = beam_search(model, source, options);
  SearchGuides guides;
  guides.constraints = {{{6, 6}, {1}}, {}, {{4, 5, 4}}};
  const auto constrained = beam_search(model, source, options, guides);
  for (size_t b = 0; b < 3; ++b) {
    REQUIRE(!constrained[b].empty());
    for (const auto& h : constrained[b]) {
      INFO("row " << b);
      CHECK(h.finished);
      for (const auto& phrase : guides.constraints[b]) CHECK(contains_run(h.tokens, phrase));
      CHECK(h.log_prob == Approx(force_decode(model, row_alone(source, static_cast<int64_t>(b)), h.tokens, false).log_prob).margin(1e-4));
    }
  }
  // The unconstrained row of the batch is searched as without constraints.
  REQUIRE(constrained[1].size() == free[1].size());
  for (size_t k = 0; k < free[1].size(); ++k) CHECK(constrained[1][k].tokens == free[1][k].tokens);
  // The free search's best did not already hold the phrases: the constraint changed it.
  CHECK(!(contains_run(free[0][0].tokens, {6, 6}) && contains_run(free[0][0].tokens, {1})));
}

TEST_CASE("a length limit too short for the phrases ends the search with cut hypotheses", "[search][constraints]") {
  FakeSeq2Seq model(7, false);
  const auto source = torch::tensor({{4, 5, 6, 3}});
  SearchOptions options;
  options.beam = 3;
  options.max_length_ratio = 0;
  options.max_length_extra = 2;
  SearchGuides guides;
  guides.constraints = {{{4, 4}, {5, 5}}};  // 4 tokens in a limit of 2
  const auto results = beam_search(model, source, options, guides);
  REQUIRE(results[0].size() == 1);
  CHECK(!results[0][0].finished);
  CHECK(results[0][0].tokens.size() <= 2);
}

TEST_CASE("constraints are checked", "[search][constraints]") {
  FakeSeq2Seq model;
  const auto source = torch::tensor({{4, 5, 6, 3}});
  SearchOptions options;
  SearchGuides guides;
  guides.constraints = {{{4}}, {{5}}};
  CHECK_THROWS_WITH(beam_search(model, source, options, guides), HasSubstring("constraints for 2 lines, but 1 source rows"));
  guides.constraints = {{{4, SpecialIds::kEos}}};
  CHECK_THROWS_WITH(beam_search(model, source, options, guides), HasSubstring("special token 3"));
  guides.constraints = {{{}}};
  CHECK_THROWS_WITH(beam_search(model, source, options, guides), HasSubstring("an empty constraint"));
}
