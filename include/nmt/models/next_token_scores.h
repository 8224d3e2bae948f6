#pragma once
// What a decoding step says about the next token: scores over the target vocabulary that
// are its log-probabilities up to a constant per row. Models return their logits and
// leave the normalisation to whoever needs it: a beam search needs the log-probs of the
// few tokens it keeps (decoding's best_tokens), not a [rows, V] log-softmax written and
// read again at every step.
#include <torch/types.h>

#include <cstdint>

namespace nmt {

class NextTokenScores {
 public:
  NextTokenScores() = default;
  /// Unnormalised scores [B, V] (a model's output layer).
  static NextTokenScores logits(torch::Tensor values) { return {std::move(values), false}; }
  /// Log-probabilities [B, V] already (an ensemble's mixture).
  static NextTokenScores log_probs(torch::Tensor values) { return {std::move(values), true}; }

  /// [B, V]: in each row, the log-probs plus a constant (0 when normalised()).
  const torch::Tensor& values() const { return values_; }
  bool normalised() const { return normalised_; }
  /// [B, V] log-softmax of values() (values() itself when normalised()).
  torch::Tensor log_probs() const;

 private:
  NextTokenScores(torch::Tensor values, bool normalised) : values_(std::move(values)), normalised_(normalised) {}

  torch::Tensor values_;
  bool normalised_ = false;
};

}  // namespace nmt
