// The search-strategy registry: the default choice by beam size, explicit choices, refusals.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/decoding/strategy.h"
#include "support/fake_seq2seq.h"

using namespace nmt;

TEST_CASE("the registry lists greedy, beam and sample", "[strategy]") {
  CHECK(search_strategy_names() == std::vector<std::string>{"greedy", "beam", "sample"});
  CHECK(search_strategy_list() == "greedy, beam, sample");
}

TEST_CASE("beam 1 picks greedy by default, an explicit choice wins", "[strategy]") {
  SearchOptions options;
  options.beam = 1;
  options.nbest = 1;
  CHECK(strategy_for(options).name == "greedy");
  options.beam = 4;
  CHECK(strategy_for(options).name == "beam");
  options.strategy = "greedy";
  CHECK(strategy_for(options).name == "greedy");
  options.strategy = "sampling";
  CHECK_THROWS_WITH(strategy_for(options), HasSubstring("unknown search strategy \"sampling\" (expected greedy, beam, sample)"));
}

TEST_CASE("search() runs the chosen strategy", "[strategy]") {
  test::FakeSeq2Seq model(5);
  const auto source = torch::tensor({{4, 5, 6, 3}, {5, 5, 3, 0}});
  SearchOptions options;
  options.beam = 1;
  options.nbest = 1;
  options.alpha = 0.6;
  const auto greedy = greedy_search(model, source, options);
  const auto by_default = search(model, source, options);
  REQUIRE(by_default.size() == 2);
  for (size_t s = 0; s < 2; ++s) CHECK(by_default[s][0].tokens == greedy[s].tokens);

  options.beam = 3;
  options.strategy = "beam";
  const auto beam = beam_search(model, source, options);
  const auto chosen = search(model, source, options);
  for (size_t s = 0; s < 2; ++s) {
    CHECK(chosen[s][0].tokens == beam[s][0].tokens);
    CHECK(chosen[s][0].score == beam[s][0].score);
  }

  options.strategy = "greedy";
  options.nbest = 2;
  CHECK_THROWS_WITH(search(model, source, options), HasSubstring("nbest must be 1"));
}

TEST_CASE("what a strategy takes is said by the registry, not by its name") {
  CHECK(find_search_strategy("beam").takes_constraints);
  CHECK_FALSE(find_search_strategy("greedy").takes_constraints);
  CHECK_FALSE(find_search_strategy("sample").takes_constraints);
  CHECK(find_search_strategy("sample").draws_samples);
  CHECK_FALSE(find_search_strategy("beam").draws_samples);
  // n-best counts draws when sampling, so it may exceed the beam; not otherwise.
  SearchOptions options;
  options.beam = 1;
  options.nbest = 4;
  options.strategy = "sample";
  CHECK_NOTHROW(options.validate());
  options.strategy = "beam";
  CHECK_THROWS_WITH(options.validate(), HasSubstring("nbest"));
}
