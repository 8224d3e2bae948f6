// Beam and greedy search against exhaustive search over a fake model whose every
// log-prob the tests can recompute (tests/support/fake_seq2seq.h, tests/support/search_reference.h).
#include "support/catch.h"

#include "support/search_reference.h"

using namespace nmt::test;
using nmt::Hypothesis;
using nmt::SearchOptions;


TEST_CASE("beam search with a beam that prunes nothing equals exhaustive search", "[search]") {
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    // Seeds 3 and 4: peaked distributions, where penalised long hypotheses win.
    FakeSeq2Seq model(seed, true, seed < 3 ? 3.0f : 10.0f);
    for (double alpha : {0.0, 0.6, 2.0}) {
      for (double coverage : {0.0, 0.5}) {
        for (int min_length : {0, 2, 5}) {  // 5: nothing can finish, all cut at the limit
          SearchOptions o = short_options();
          o.beam = kHugeBeam;
          o.nbest = 3;
          o.alpha = alpha;
          o.coverage = coverage;
          o.min_length = min_length;
          INFO("seed " << seed << " alpha " << alpha << " coverage " << coverage << " min " << min_length);
          const auto results = nmt::beam_search(model, batch_of(kSources), o);
          REQUIRE(results.size() == kSources.size());
          for (size_t s = 0; s < kSources.size(); ++s) {
            const auto expected = exhaustive(model, kSources[s], o);
            REQUIRE(results[s].size() == std::min<size_t>(o.nbest, expected.size()));
            for (size_t i = 0; i < results[s].size(); ++i) {
              CHECK(results[s][i].tokens == expected[i].tokens);
              CHECK(results[s][i].finished == expected[i].finished);
              CHECK(results[s][i].score == Approx(expected[i].score).epsilon(1e-6));
              check_consistent(model, kSources[s], results[s][i], o);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("small beams return consistent hypotheses no better than the optimum", "[search]") {
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    FakeSeq2Seq model(seed);
    for (double alpha : {0.0, 0.6}) {
      for (int beam = 1; beam <= 4; ++beam) {
        SearchOptions o = short_options();
        o.beam = beam;
        o.nbest = beam;
        o.alpha = alpha;
        INFO("seed " << seed << " alpha " << alpha << " beam " << beam);
        const auto results = nmt::beam_search(model, batch_of(kSources), o);
        for (size_t s = 0; s < kSources.size(); ++s) {
          REQUIRE(!results[s].empty());
          CHECK(results[s][0].score <= exhaustive(model, kSources[s], o)[0].score + 1e-9);
          check_sorted_and_distinct(results[s]);
          for (const auto& h : results[s]) check_consistent(model, kSources[s], h, o);
        }
      }
    }
  }
}

TEST_CASE("beam 1 equals greedy search without penalties", "[search]") {
  const std::vector<Row> sources = {{4, 3}, {5, 6, 4, 1, 3}, {6, 3}, {4, 4, 5, 3}};
  for (unsigned seed = 1; seed <= 8; ++seed) {
    FakeSeq2Seq model(seed);
    for (int min_length : {0, 2}) {
      SearchOptions o;
      o.beam = 1;
      o.alpha = 0;
      o.min_length = min_length;
      o.keep_attention = true;
      const auto beam = nmt::beam_search(model, batch_of(sources), o);
      const auto greedy = nmt::greedy_search(model, batch_of(sources), o);
      for (size_t s = 0; s < sources.size(); ++s) {
        REQUIRE(beam[s].size() == 1);
        check_same(beam[s][0], greedy[s]);
        check_consistent(model, sources[s], greedy[s], o);
      }
    }
  }
}

TEST_CASE("with a length penalty beam 1 is never worse than greedy", "[search]") {
  // Greedy's hypothesis is among beam 1's finished ones; beam 1 keeps looking only
  // while an open hypothesis could still beat it (see search.h).
  for (unsigned seed = 1; seed <= 8; ++seed) {
    FakeSeq2Seq model(seed);
    SearchOptions o;
    o.beam = 1;
    const auto beam = nmt::beam_search(model, batch_of(kSources), o);
    const auto greedy = nmt::greedy_search(model, batch_of(kSources), o);
    for (size_t s = 0; s < kSources.size(); ++s) {
      CHECK(beam[s][0].score >= greedy[s].score);
      check_consistent(model, kSources[s], greedy[s], o);
    }
  }
}

TEST_CASE("a batch gives the same results as one sentence at a time", "[search]") {
  const std::vector<Row> sources = {{4, 3}, {5, 6, 4, 1, 3}, {6, 3}, {4, 4, 5, 3}, {1, 5, 3}};
  FakeSeq2Seq model(11);
  SearchOptions o;
  o.beam = 3;
  o.nbest = 2;
  o.coverage = 0.2;
  o.keep_attention = true;
  o.max_length_ratio = 1.5;
  o.max_length_extra = 2;
  const auto batch = nmt::beam_search(model, batch_of(sources), o);
  const auto greedy = nmt::greedy_search(model, batch_of(sources), o);
  for (size_t s = 0; s < sources.size(); ++s) {
    const auto alone = nmt::beam_search(model, batch_of({sources[s]}), o);
    REQUIRE(alone[0].size() == batch[s].size());
    for (size_t i = 0; i < alone[0].size(); ++i) check_same(alone[0][i], batch[s][i]);
    check_same(nmt::greedy_search(model, batch_of({sources[s]}), o)[0], greedy[s]);
  }
}

TEST_CASE("n-best lists are sorted by score and distinct", "[search]") {
  FakeSeq2Seq model(5);
  SearchOptions o;
  o.beam = 6;
  o.nbest = 6;
  for (double alpha : {0.0, 1.0}) {
    o.alpha = alpha;
    const auto results = nmt::beam_search(model, batch_of(kSources), o);
    for (size_t s = 0; s < kSources.size(); ++s) {
      CHECK(results[s].size() == 6);
      check_sorted_and_distinct(results[s]);
      for (const auto& h : results[s]) CHECK(h.finished);
    }
  }
}
