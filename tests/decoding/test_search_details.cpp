// Search details: length limits, kept attention, batch shrinking, the exact stopping
// rule, forced decoding and option validation.
#include "support/catch.h"

#include <cmath>
#include <stdexcept>

#include "nmt/base/error.h"
#include "nmt/decoding/search_statistics.h"
#include "support/search_reference.h"

using namespace nmt::test;
using nmt::Hypothesis;
using nmt::SearchOptions;
using nmt::SpecialIds;

TEST_CASE("minimum and maximum lengths are respected", "[search]") {
  FakeSeq2Seq model(3);
  SECTION("min_length") {
    SearchOptions o;
    o.nbest = 5;
    o.min_length = 4;
    for (const auto& list : nmt::beam_search(model, batch_of(kSources), o))
      for (const auto& h : list) CHECK(h.tokens.size() >= 4);
    for (const auto& h : nmt::greedy_search(model, batch_of(kSources), o)) CHECK(h.tokens.size() >= 4);
  }
  SECTION("max length for several ratios") {
    for (double ratio : {0.0, 0.5, 1.0, 2.0}) {
      for (int extra : {0, 1, 3}) {
        SearchOptions o;
        o.nbest = 3;
        o.max_length_ratio = ratio;
        o.max_length_extra = extra;
        const auto results = nmt::beam_search(model, batch_of(kSources), o);
        const auto greedy = nmt::greedy_search(model, batch_of(kSources), o);
        for (size_t s = 0; s < kSources.size(); ++s) {
          const int64_t limit = nmt::max_target_length(kSources[s].size() - 1, o);
          CHECK(limit == max_length_of(kSources[s], o));
          for (const auto& h : results[s]) CHECK(static_cast<int64_t>(h.tokens.size()) <= limit);
          CHECK(static_cast<int64_t>(greedy[s].tokens.size()) <= limit);
        }
      }
    }
  }
  SECTION("a limit of zero forces eos first") {
    SearchOptions o;
    o.max_length_ratio = 0;
    o.max_length_extra = 0;
    const auto h = nmt::beam_search(model, batch_of(kSources), o)[2][0];
    CHECK(h.tokens.empty());
    CHECK(h.finished);
    CHECK(h.token_log_probs.size() == 1);
  }
  SECTION("min_length beyond the limit: hypotheses are cut at the limit") {
    SearchOptions o = short_options();
    o.min_length = 10;
    o.nbest = 2;
    o.keep_attention = true;
    const auto results = nmt::beam_search(model, batch_of(kSources), o);
    const auto greedy = nmt::greedy_search(model, batch_of(kSources), o);
    for (size_t s = 0; s < kSources.size(); ++s) {
      const auto limit = static_cast<size_t>(max_length_of(kSources[s], o));
      REQUIRE(results[s].size() == 2);
      for (const auto& h : results[s]) {
        CHECK(!h.finished);
        CHECK(h.tokens.size() == limit);
        CHECK(h.token_log_probs.size() == limit);
        CHECK(h.attention.size(0) == static_cast<int64_t>(limit));
      }
      CHECK(!greedy[s].finished);
      CHECK(greedy[s].tokens.size() == limit);
    }
  }
}

TEST_CASE("kept attention holds the rows the model returned", "[search]") {
  FakeSeq2Seq model(9);
  SearchOptions o;
  o.beam = 3;
  o.nbest = 3;
  o.keep_attention = true;
  auto check = [&](const Row& source, const Hypothesis& h) {
    const auto r = replay(model, source, h.tokens, h.finished);
    const auto rows = static_cast<int64_t>(h.token_log_probs.size());
    const auto width = static_cast<int64_t>(source.size());
    REQUIRE(h.attention.sizes() == torch::IntArrayRef({rows, width}));
    REQUIRE(h.layer_attention.size() == FakeSeq2Seq::kLayers);
    for (int64_t t = 0; t < rows; ++t) {
      CHECK(torch::allclose(h.attention[t], r.attention[t]));
      for (int64_t l = 0; l < FakeSeq2Seq::kLayers; ++l) {
        REQUIRE(h.layer_attention[l].sizes() == torch::IntArrayRef({rows, FakeSeq2Seq::kHeads, width}));
        for (int64_t head = 0; head < FakeSeq2Seq::kHeads; ++head)
          CHECK(torch::allclose(h.layer_attention[l][t][head],
                                attention_row(source, t, r.previous[t], FakeSeq2Seq::head_scale(l, head))));
      }
    }
  };
  const auto results = nmt::beam_search(model, batch_of(kSources), o);
  const auto greedy = nmt::greedy_search(model, batch_of(kSources), o);
  for (size_t s = 0; s < kSources.size(); ++s) {
    for (const auto& h : results[s]) check(kSources[s], h);
    check(kSources[s], greedy[s]);
  }
  o.keep_attention = false;
  const auto plain = nmt::beam_search(model, batch_of(kSources), o);
  CHECK(!plain[0][0].attention.defined());
  CHECK(plain[0][0].layer_attention.empty());
}

TEST_CASE("models without attention keep none and ignore the coverage penalty", "[search]") {
  FakeSeq2Seq model(4, /*with_attention=*/false);
  SearchOptions o;
  o.keep_attention = true;
  o.coverage = 0.7;
  const auto with_coverage = nmt::beam_search(model, batch_of(kSources), o);
  o.coverage = 0;
  const auto without = nmt::beam_search(model, batch_of(kSources), o);
  for (size_t s = 0; s < kSources.size(); ++s) {
    CHECK(!with_coverage[s][0].attention.defined());
    CHECK(with_coverage[s][0].layer_attention.empty());
    CHECK(with_coverage[s][0].tokens == without[s][0].tokens);
    CHECK(with_coverage[s][0].score == without[s][0].score);
  }
}

TEST_CASE("finished sentences leave the batch", "[search]") {
  FakeSeq2Seq model(2);
  SearchOptions o = short_options();
  o.beam = 2;
  o.min_length = 10;  // every sentence runs to its own limit: 2, 3 and 4 tokens
  nmt::beam_search(model, batch_of(kSources), o);
  // The first step runs one row per sentence (all start from bos), then beam rows each.
  CHECK(model.rows_per_step == std::vector<int64_t>{3, 6, 6, 4, 2});
}

TEST_CASE("force_decode scores the given target through step()", "[search]") {
  FakeSeq2Seq model(6);
  const Row source = {5, 6, 4, 3};
  const std::vector<int> target = {4, 6, 1, 5};
  const auto h = nmt::force_decode(model, batch_of({source}), target, true);
  const auto r = replay(model, source, target, true);
  CHECK(h.tokens == target);
  CHECK(h.finished);
  CHECK(close_log_probs(h.token_log_probs, r.token_log_probs));
  CHECK(h.log_prob == Approx(r.log_prob).epsilon(1e-6));
  CHECK(h.score == h.log_prob);
  REQUIRE(h.attention.sizes() == torch::IntArrayRef({5, 4}));
  for (int64_t t = 0; t < 5; ++t) CHECK(torch::allclose(h.attention[t], r.attention[t]));
  CHECK(h.layer_attention.size() == FakeSeq2Seq::kLayers);

  SearchOptions o;
  o.alpha = 0;
  const auto best = nmt::beam_search(model, batch_of({source}), o)[0][0];
  const auto forced = nmt::force_decode(model, batch_of({source}), best.tokens, false);
  CHECK(forced.log_prob == best.log_prob);
  CHECK(!forced.attention.defined());
  CHECK_THROWS_AS(nmt::force_decode(model, batch_of({source}), {4, 99}, false), nmt::Error);
  CHECK_THROWS_AS(nmt::force_decode(model, batch_of(kSources), {4}, false), nmt::Error);
}

TEST_CASE("keeping attention costs work linear in the output length", "[search]") {
  FakeSeq2Seq model(6);
  const Row source = {5, 6, 4, 3};
  // Elements written into attention histories for an output of `length` tokens.
  auto copied_for = [&](int length, bool beam) {
    const auto before = nmt::search_detail::attention_history_elements_copied();
    if (beam) {
      SearchOptions o;
      o.keep_attention = true;
      o.min_length = length;  // exactly `length` tokens, then eos
      o.max_length_ratio = 0;
      o.max_length_extra = length;
      const auto best = nmt::beam_search(model, batch_of({source}), o)[0][0];
      CHECK(best.tokens.size() == static_cast<size_t>(length));
      CHECK(best.attention.size(0) == length + 1);
    } else {
      const auto forced = nmt::force_decode(model, batch_of({source}), std::vector<int>(length, 4), true);
      CHECK(forced.attention.size(0) == length + 1);
    }
    return static_cast<double>(nmt::search_detail::attention_history_elements_copied() - before);
  };
  for (bool beam : {false, true}) {
    INFO((beam ? "beam search" : "forced decoding"));
    const double short_output = copied_for(150, beam), long_output = copied_for(600, beam);
    CHECK(short_output > 0);
    CHECK(long_output < 5 * short_output);  // 4x the length: quadratic work would be 16x
  }
}

TEST_CASE("search options are validated", "[search]") {
  auto invalid = [](auto change, const char* field) {
    SearchOptions o;
    change(o);
    CHECK_THROWS_WITH(o.validate(), HasSubstring(field));
  };
  invalid([](SearchOptions& o) { o.beam = 0; }, "beam");
  invalid([](SearchOptions& o) { o.nbest = 0; }, "nbest");
  invalid([](SearchOptions& o) { o.nbest = 6; }, "nbest");
  invalid([](SearchOptions& o) { o.alpha = -0.1; }, "alpha");
  invalid([](SearchOptions& o) { o.alpha = NAN; }, "alpha");
  invalid([](SearchOptions& o) { o.coverage = -1; }, "coverage");
  invalid([](SearchOptions& o) { o.max_length_ratio = -1; }, "max_length_ratio");
  invalid([](SearchOptions& o) { o.max_length_extra = -1; }, "max_length_extra");
  invalid([](SearchOptions& o) { o.min_length = -1; }, "min_length");
  CHECK_NOTHROW(SearchOptions().validate());

  FakeSeq2Seq model;
  SearchOptions bad;
  bad.beam = 0;
  CHECK_THROWS_AS(nmt::beam_search(model, batch_of(kSources), bad), nmt::Error);
  CHECK_THROWS_AS(nmt::greedy_search(model, batch_of(kSources), bad), nmt::Error);
  CHECK_THROWS_AS(nmt::beam_search(model, torch::tensor({4, 3}), SearchOptions()), nmt::Error);
  CHECK_THROWS_AS(nmt::beam_search(model, batch_of(kSources).to(torch::kInt), SearchOptions()), nmt::Error);
}

namespace {

// Every row gets the same distribution at a given step (the last one repeats); no
// attention. Enough to build cases by hand.
class ScriptedModel : public nmt::Seq2SeqModel {
 public:
  explicit ScriptedModel(const std::vector<std::vector<float>>& probabilities) {
    for (const auto& step : probabilities) rows_.push_back(torch::tensor(step).log());
  }
  nmt::EncoderOutput encode(const torch::Tensor& source) override {
    nmt::EncoderOutput out;
    out.memory = source.to(torch::kFloat).unsqueeze(-1);
    out.source_mask = source.ne(0);
    return out;
  }
  // Nothing to carry but the step count.
  struct State : nmt::DecoderState {
    void reorder(const torch::Tensor&) override {}
    void select(const torch::Tensor&) override {}
    nmt::DecoderStatePtr clone() const override { return std::make_unique<State>(*this); }
  };
  nmt::DecoderStatePtr initial_state(const nmt::EncoderOutput&) override { return std::make_unique<State>(); }
  nmt::StepOutput step(const torch::Tensor& previous, nmt::DecoderState& state) override {
    const auto& row = rows_[std::min<size_t>(state.step++, rows_.size() - 1)];
    return {nmt::NextTokenScores::log_probs(row.unsqueeze(0).expand({previous.size(0), -1}).clone()), {}, {}};
  }
  nmt::ForwardOutput forward(const torch::Tensor&, const torch::Tensor&) override {
    throw std::logic_error("ScriptedModel: forward is not used");
  }
  bool has_attention() const override { return false; }

 private:
  std::vector<torch::Tensor> rows_;
};

}  // namespace

TEST_CASE("with a length penalty search stops only when no open hypothesis can win", "[search]") {
  // Vocabulary pad, unk, bos, eos, w. Step 0: eos 0.6, w 0.4; steps 1-4: w is almost
  // certain; step 5 (the limit, 5 tokens): eos is almost certain.
  ScriptedModel model({{0, 0, 0, 0.6f, 0.4f},
                       {0, 0, 0, 0.001f, 0.999f},
                       {0, 0, 0, 0.001f, 0.999f},
                       {0, 0, 0, 0.001f, 0.999f},
                       {0, 0, 0, 0.001f, 0.999f},
                       {0, 0, 0, 0.999f, 0.001f}});
  const auto source = batch_of({{4, 3}});
  SearchOptions o;
  o.max_length_ratio = 0;
  o.max_length_extra = 5;
  o.beam = 1;
  const std::vector<int> long_one = {4, 4, 4, 4, 4};
  SECTION("no penalty: eos at once is best, beam 1 stops like greedy") {
    o.alpha = 0;
    CHECK(nmt::beam_search(model, source, o)[0][0].tokens.empty());
    CHECK(nmt::greedy_search(model, source, o)[0].tokens.empty());
  }
  SECTION("alpha 2: the long hypothesis wins") {
    // Greedy ends at once: log(0.6) / 1 = -0.51. After that step the open "w" has
    // log(0.4) = -0.92; the usual heuristic bound -0.92 / ((5+2)/6)^2 = -0.67 would
    // stop, but w w w w w eos reaches (log 0.4 + 5 log 0.999) / ((5+6)/6)^2 = -0.274.
    o.alpha = 2;
    const double expected = (std::log(0.4f) + 5 * std::log(0.999f)) / std::pow(11.0 / 6.0, 2);
    const auto greedy = nmt::greedy_search(model, source, o)[0];
    CHECK(greedy.tokens.empty());
    CHECK(greedy.score == Approx(std::log(0.6f)));
    for (int beam : {1, 2, 5}) {
      o.beam = beam;
      const auto best = nmt::beam_search(model, source, o)[0][0];
      CHECK(best.tokens == long_one);
      CHECK(best.finished);
      CHECK(best.score == Approx(expected));
    }
  }
}
