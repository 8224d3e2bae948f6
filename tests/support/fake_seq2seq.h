#pragma once
// A tiny deterministic Seq2SeqModel for testing the search algorithms.
//
// Vocabulary of 7 (pad 0, unk 1, bos 2, eos 3, words 4..6). The log-probs of a step
// come from a fixed random table indexed by (key of the source, step, previous token,
// hash of all previous tokens). The hash is per-hypothesis state (FakeState), so a
// search that reorders the state wrongly gets different log-probs than the tests
// recompute from the returned tokens; the source's key is per-sentence state.
// Attention is a fixed function of (step, previous token) over the real source positions.
#include <torch/torch.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "nmt/models/model.h"

namespace nmt::test {

struct FakeState : DecoderState {
  torch::Tensor key, positions, mask;  // per sentence, one row per hypothesis
  torch::Tensor hash;                  // per hypothesis
  void reorder(const torch::Tensor& index) override { hash = hash.index_select(0, index); }
  void select(const torch::Tensor& index) override {
    reorder(index);
    key = key.index_select(0, index);
    positions = positions.index_select(0, index);
    mask = mask.index_select(0, index);
  }
  DecoderStatePtr clone() const override { return std::make_unique<FakeState>(*this); }
};

class FakeSeq2Seq : public Seq2SeqModel {
 public:
  static constexpr int64_t kVocab = 7, kKeys = 3, kSteps = 12, kHashes = 3;
  static constexpr int64_t kLayers = 2, kHeads = 2;

  /// spread: logits are uniform in [-spread, spread]; a large spread gives near-certain
  /// tokens, whose long sequences a length penalty prefers.
  explicit FakeSeq2Seq(unsigned seed = 7, bool with_attention = true, float spread = 3)
      : with_attention_(with_attention) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-spread, spread);
    std::vector<float> logits(kKeys * kSteps * kVocab * kHashes * kVocab);
    for (auto& x : logits) x = uniform(generator);
    logits_ = torch::tensor(logits).view({-1, kVocab});
    table_ = logits_.log_softmax(1);
  }

  /// The hash the model uses at `step` given the previous hash and token.
  static int64_t next_hash(int64_t hash, int64_t step, int64_t previous) {
    return (hash + previous * (step + 1)) % kHashes;
  }
  static int64_t key_of(const std::vector<int64_t>& source_row) {
    int64_t sum = 0;
    for (auto id : source_row) sum += id;
    return sum % kKeys;
  }
  float log_prob(int64_t key, int64_t step, int64_t previous, int64_t hash, int64_t token) const {
    return table_[row_of(key, step, previous, hash)][token].item<float>();
  }
  /// Attention at `step` after `previous`, [rows, S], zero beyond each row's `positions`.
  /// scale > 1 gives the sharper per-layer / per-head distributions.
  static torch::Tensor attention(const torch::Tensor& positions, int64_t source_width,
                                 int64_t step, const torch::Tensor& previous, double scale = 1) {
    auto j = torch::arange(source_width, torch::kFloat).unsqueeze(0);
    auto logits = (j * 1.3 + step * 0.7 + previous.to(torch::kFloat).unsqueeze(1) * 0.4).sin() * scale;
    return logits.masked_fill(j >= positions.unsqueeze(1), -INFINITY).softmax(1);
  }
  static double head_scale(int64_t layer, int64_t head) { return 1.0 + layer + 2.0 * head; }

  EncoderOutput encode(const torch::Tensor& source) override {
    EncoderOutput out;
    out.memory = source.to(torch::kFloat).unsqueeze(-1);
    out.source_mask = source.ne(0);
    return out;
  }

  DecoderStatePtr initial_state(const EncoderOutput& encoded) override {
    auto state = std::make_unique<FakeState>();
    // memory holds the source ids (exact in float): the key is their sum, as the encoder saw it.
    state->key = encoded.memory.squeeze(-1).sum(1).to(torch::kLong).remainder(kKeys);
    state->positions = encoded.source_mask.sum(1);
    state->mask = encoded.source_mask;
    state->hash = torch::zeros({encoded.memory.size(0)}, torch::kLong);
    return state;
  }

  StepOutput step(const torch::Tensor& previous, DecoderState& base) override {
    auto& state = state_as<FakeState>(base);
    const int64_t rows = previous.size(0);
    rows_per_step.push_back(rows);
    for (const auto* t : {&state.key, &state.positions, &state.mask, &state.hash})
      if (t->size(0) != rows) throw std::runtime_error("fake: state rows differ");
    const int64_t t = state.step;
    auto hash = (state.hash + previous * (t + 1)).remainder(kHashes);
    auto index = ((state.key * kSteps + std::min(t, kSteps - 1)) * kVocab + previous) *
                     kHashes + hash;
    StepOutput out;
    // Logits, as real models return them: the searches normalise them (log_prob() and
    // the tests read the log-softmax table).
    out.scores = NextTokenScores::logits(logits_.index_select(0, index));
    if (with_attention_) {
      const auto& positions = state.positions;
      const int64_t width = state.mask.size(1);
      out.attention = attention(positions, width, t, previous);
      for (int64_t l = 0; l < kLayers; ++l) {
        std::vector<torch::Tensor> heads;
        for (int64_t h = 0; h < kHeads; ++h)
          heads.push_back(attention(positions, width, t, previous, head_scale(l, h)));
        out.layer_attention.push_back(torch::stack(heads, 1));
      }
    }
    state.hash = hash;
    ++state.step;
    return out;
  }

  ForwardOutput forward(const torch::Tensor& source, const torch::Tensor& target_input) override {
    const auto state = initial_state(encode(source));
    std::vector<torch::Tensor> steps;
    for (int64_t t = 0; t < target_input.size(1); ++t)
      steps.push_back(step(target_input.select(1, t), *state).scores.log_probs());
    return {torch::stack(steps, 1)};
  }

  bool has_attention() const override { return with_attention_; }
  int64_t attention_layers() const override { return with_attention_ ? kLayers : 0; }

  std::vector<int64_t> rows_per_step;  // batch rows of every step() call

 private:
  static int64_t row_of(int64_t key, int64_t step, int64_t previous, int64_t hash) {
    return ((key * kSteps + std::min(step, kSteps - 1)) * kVocab + previous) * kHashes + hash;
  }
  torch::Tensor logits_;  // [keys * steps * vocab * hashes, vocab]
  torch::Tensor table_;   // logits_ log-softmaxed
  bool with_attention_;
};

}  // namespace nmt::test
