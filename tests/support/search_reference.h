#pragma once
// Reference computations for the search tests: the fake model replayed along a token
// sequence, GNMT scoring written independently of lib/decoding/search.cpp, and exhaustive
// search over every allowed sequence up to the length limit.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "support/catch.h"

#include "support/fake_seq2seq.h"
#include "nmt/decoding/search.h"
#include "nmt/text/tokenizer.h"

namespace nmt::test {

using Row = std::vector<int64_t>;
inline const std::vector<Row> kSources = {{4, 3}, {5, 6, 3}, {6, 4, 5, 3}};
inline const std::vector<int> kWords = {1, 4, 5, 6};  // all but pad, bos and eos
inline constexpr int kHugeBeam = 343;                  // vocab^3: nothing is ever pruned below

inline torch::Tensor batch_of(const std::vector<Row>& rows) {
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.size());
  auto batch = torch::zeros({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)}, torch::kLong);
  for (size_t b = 0; b < rows.size(); ++b)
    for (size_t j = 0; j < rows[b].size(); ++j) batch[b][j] = rows[b][j];
  return batch;
}

inline int64_t max_length_of(const Row& source, const SearchOptions& o) {
  return static_cast<int64_t>(std::floor(o.max_length_ratio * (source.size() - 1))) + o.max_length_extra;
}

// Attention the fake model gives at `step` after `previous`, over the source's positions.
inline torch::Tensor attention_row(const Row& source, int64_t step, int64_t previous, double scale = 1) {
  const auto positions = static_cast<int64_t>(source.size());
  return FakeSeq2Seq::attention(torch::tensor({positions}), positions, step, torch::tensor({previous}), scale)[0];
}

// GNMT penalties, written independently of lib/decoding/search.cpp.
inline double gnmt_score(double log_prob, size_t length, const std::vector<double>& coverage,
                  const SearchOptions& o) {
  double score = log_prob / std::pow((5.0 + length) / 6.0, o.alpha);
  if (o.coverage > 0)
    for (double mass : coverage) score += o.coverage * std::log(std::min(mass, 1.0));
  return score;
}

// The fake model replayed along `tokens` (then eos when finished).
struct Replay {
  std::vector<float> token_log_probs;
  double log_prob = 0;
  std::vector<double> coverage;
  std::vector<torch::Tensor> attention;  // per generated token: [S']
  std::vector<int64_t> previous;         // the token fed at each step
};

inline Replay replay(const FakeSeq2Seq& model, const Row& source, std::vector<int> tokens, bool finished) {
  if (finished) tokens.push_back(SpecialIds::kEos);
  Replay r;
  r.coverage.assign(source.size(), 0.0);
  int64_t hash = 0, previous = SpecialIds::kBos;
  for (size_t t = 0; t < tokens.size(); ++t) {
    hash = FakeSeq2Seq::next_hash(hash, t, previous);
    r.token_log_probs.push_back(model.log_prob(FakeSeq2Seq::key_of(source), t, previous, hash, tokens[t]));
    r.log_prob += r.token_log_probs.back();
    r.attention.push_back(attention_row(source, t, previous));
    for (size_t j = 0; j < source.size(); ++j) r.coverage[j] += r.attention.back()[j].item<float>();
    r.previous.push_back(previous);
    previous = tokens[t];
  }
  return r;
}

struct Scored {
  std::vector<int> tokens;
  bool finished;
  double score;
};

inline void enumerate(const FakeSeq2Seq& model, const Row& source, const SearchOptions& o,
               std::vector<int>& prefix, std::vector<Scored>& out) {
  const auto length = static_cast<int64_t>(prefix.size());
  if (length >= o.min_length) {
    const auto r = replay(model, source, prefix, true);
    out.push_back({prefix, true, gnmt_score(r.log_prob, length + 1, r.coverage, o)});
  }
  if (length == max_length_of(source, o)) {
    const auto r = replay(model, source, prefix, false);
    out.push_back({prefix, false, gnmt_score(r.log_prob, length, r.coverage, o)});
    return;
  }
  for (int word : kWords) {
    prefix.push_back(word);
    enumerate(model, source, o, prefix, out);
    prefix.pop_back();
  }
}

// Every allowed sequence, best first; unfinished ones only if nothing can finish.
inline std::vector<Scored> exhaustive(const FakeSeq2Seq& model, const Row& source, const SearchOptions& o) {
  std::vector<Scored> all, finished, cut;
  std::vector<int> prefix;
  enumerate(model, source, o, prefix, all);
  for (auto& s : all) (s.finished ? finished : cut).push_back(s);
  auto& ranked = finished.empty() ? cut : finished;
  std::stable_sort(ranked.begin(), ranked.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });
  return ranked;
}

// The searches normalise logits with their own vectorised exp (decoding/best_tokens.h),
// the reference with LibTorch's log_softmax: the same log-probs within a few ulp.
inline bool close_log_probs(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::abs(a[i] - b[i]) <= 1e-6f * std::max(1.0f, std::abs(b[i])))) return false;
  return true;
}

// A hypothesis agrees with the model, the options and the scoring rule.
inline void check_consistent(const FakeSeq2Seq& model, const Row& source, const Hypothesis& h,
                      const SearchOptions& o) {
  const auto r = replay(model, source, h.tokens, h.finished);
  CHECK(close_log_probs(h.token_log_probs, r.token_log_probs));
  CHECK(h.log_prob == Approx(r.log_prob).epsilon(1e-6));
  CHECK(h.score == Approx(gnmt_score(r.log_prob, r.token_log_probs.size(), r.coverage, o)).epsilon(1e-6));
  CHECK(static_cast<int64_t>(h.tokens.size()) <= max_length_of(source, o));
  if (h.finished) CHECK(static_cast<int64_t>(h.tokens.size()) >= o.min_length);
  for (int token : h.tokens) {
    CHECK(token != SpecialIds::kPad);
    CHECK(token != SpecialIds::kBos);
    CHECK(token != SpecialIds::kEos);
  }
}

inline void check_sorted_and_distinct(const std::vector<Hypothesis>& list) {
  std::set<std::vector<int>> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    CHECK(seen.insert(list[i].tokens).second);
    if (i > 0) CHECK(list[i - 1].score >= list[i].score);
  }
}

inline void check_same(const Hypothesis& a, const Hypothesis& b) {
  CHECK(a.tokens == b.tokens);
  CHECK(a.finished == b.finished);
  CHECK(a.score == Approx(b.score).epsilon(1e-9));
  CHECK(a.log_prob == b.log_prob);
  CHECK(a.token_log_probs == b.token_log_probs);
  REQUIRE(a.attention.defined() == b.attention.defined());
  if (a.attention.defined()) CHECK(torch::allclose(a.attention, b.attention, 1e-5, 1e-7));
  REQUIRE(a.layer_attention.size() == b.layer_attention.size());
  for (size_t l = 0; l < a.layer_attention.size(); ++l)
    CHECK(torch::allclose(a.layer_attention[l], b.layer_attention[l], 1e-5, 1e-7));
}

inline SearchOptions short_options() {
  SearchOptions o;
  o.max_length_ratio = 1.0;
  o.max_length_extra = 1;  // limits 2, 3, 4 for kSources
  return o;
}

}  // namespace nmt::test
