#pragma once
// Pieces shared by beam search, greedy search and forced decoding (lib/ only).
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "nmt/models/model.h"
#include "nmt/decoding/search.h"

namespace nmt::search_detail {

/// What the searches need to know about each source sentence.
struct SourceInfo {
  int64_t positions = 0;   // real (non-pad) positions, eos included: attention is trimmed to these
  int64_t max_length = 0;  // target tokens allowed, eos excluded
};

/// Checks shape/dtype of `source` (nmt::Error otherwise) and describes each row.
std::vector<SourceInfo> describe_source(const torch::Tensor& source, const SearchOptions& options);

/// THE scoring function: length and coverage penalties applied to a raw log-prob.
/// length counts generated tokens including eos; coverage holds, per real source
/// position, the attention mass received (empty: no coverage penalty).
double hypothesis_score(double log_prob, int64_t length, const std::vector<float>& coverage,
                        const SearchOptions& options);

/// Upper bound on the score of any finished continuation of an open hypothesis that
/// has `length` tokens (no eos yet) and `log_prob`, for a sentence limited to
/// `max_length` tokens. Valid because log-probs are <= 0 and coverage penalties <= 0.
double best_reachable_score(double log_prob, int64_t length, int64_t max_length,
                            const SearchOptions& options);

/// Sets forbidden continuations to -inf in scores [rows, V], in place: pad and bos
/// always, eos before min_length, everything but eos in rows at their length limit.
void mask_forbidden(torch::Tensor& scores, int64_t step, int min_length,
                    const std::vector<uint8_t>& at_limit);

/// Host vector -> tensor on `device` (small per-step index/token/score vectors).
torch::Tensor to_tensor(const std::vector<int64_t>& values, const torch::Device& device);
torch::Tensor to_tensor(const std::vector<float>& values, const torch::Device& device);

/// Copies a small tensor to a host vector (int64 or float).
std::vector<int64_t> to_int64_vector(const torch::Tensor& tensor);
std::vector<float> to_float_vector(const torch::Tensor& tensor);

/// Everything a search keeps per row besides the model's own state: the tokens and
/// their log-probs, and, when asked for, the attention history and coverage. Rows are
/// reordered / dropped together with the decoder state by advance().
class RowHistory {
 public:
  RowHistory(int64_t rows, bool keep_attention, bool keep_layer_attention, bool track_coverage);

  /// Row `row` ended with eos at this step (eos_log_prob, attention from `out`).
  Hypothesis finish(int64_t row, float eos_log_prob, const StepOutput& out,
                    const SourceInfo& source, const SearchOptions& options) const;
  /// Row `row` as it stands, cut without eos.
  Hypothesis cut(int64_t row, const SourceInfo& source, const SearchOptions& options) const;

  /// Next step: new row i extends old row origin[i] with tokens[i] / log_probs[i],
  /// using the attention of `out`. `origin_tensor` is `origin` as a tensor;
  /// `identity` says origin == 0..rows-1 (nothing to reorder).
  void advance(const std::vector<int64_t>& origin, const torch::Tensor& origin_tensor,
               bool identity, const std::vector<int64_t>& tokens,
               const std::vector<float>& log_probs, const StepOutput& out);

  /// Whether advance()/finish() read StepOutput's attention (DecoderState::want_attention).
  bool needs_attention() const { return keep_attention_ || track_coverage_; }
  double log_prob(int64_t row) const { return paths_[row].log_prob; }
  int64_t length(int64_t row) const { return static_cast<int64_t>(paths_[row].tokens.size()); }

 private:
  struct Path {
    std::vector<int> tokens;
    std::vector<float> token_log_probs;
    double log_prob = 0;
  };
  Hypothesis make(const Path& path, bool finished, torch::Tensor attention,
                  std::vector<torch::Tensor> layer_attention, const torch::Tensor& coverage,
                  const SourceInfo& source, const SearchOptions& options) const;

  std::vector<Path> paths_;
  bool keep_attention_, keep_layer_attention_, track_coverage_;
  torch::Tensor attention_;                     // [rows, t, S]
  std::vector<torch::Tensor> layer_attention_;  // per layer [rows, t, H, S]
  torch::Tensor coverage_;                      // [rows, S] attention mass so far
};

}  // namespace nmt::search_detail
