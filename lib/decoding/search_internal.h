#pragma once
// Pieces shared by beam search, greedy search and forced decoding (lib/ only).
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "nmt/models/model.h"
#include "nmt/decoding/best_tokens.h"
#include "nmt/decoding/search.h"

namespace nmt::search_detail {

/// What the searches need to know about each source sentence.
struct SourceInfo {
  int64_t positions = 0;   // real (non-pad) positions, eos included: attention is trimmed to these
  int64_t max_length = 0;  // target tokens allowed, eos excluded
  std::vector<int> prefix;  // tokens forced first (SearchGuides::prefixes)
  std::vector<std::vector<int>> constraints;  // phrases every hypothesis must contain
};

/// Checks shape/dtype of `source` (nmt::Error otherwise) and describes each row.
std::vector<SourceInfo> describe_source(const torch::Tensor& source, const SearchOptions& options,
                                        const SearchGuides& guides = {});

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

/// A search's rules at `step` for rows whose sentences are sentence_of_row (indices into
/// `sources`); nmt::Error if a prefix token is outside a vocabulary of `vocab` ids.
ForbiddenTokens forbidden_tokens(int64_t step, int min_length, const std::vector<SourceInfo>& sources,
                                 const std::vector<int64_t>& sentence_of_row, int64_t vocab);

/// What a one-hypothesis-per-row search takes at each step: for each row of the step's
/// `scores`, the token it continues with among those `forbidden` allows, and that token's
/// log-prob (-inf when nothing is allowed). `streams` holds each row's random stream (for
/// searches that draw), `step` counts from 0.
struct RowChoice {
  std::vector<int64_t> tokens;
  std::vector<float> log_probs;
};
using ChooseTokens = std::function<RowChoice(const NextTokenScores& scores, const ForbiddenTokens& forbidden,
                                             const std::vector<int64_t>& streams, int64_t step)>;

/// The loop of greedy search and sampling: one hypothesis per source row, stepped
/// together; a row leaves the batch when it chooses eos or nothing is allowed.
/// `streams` has one entry per source row and follows its row.
std::vector<Hypothesis> single_path_search(Seq2SeqModel& model, const torch::Tensor& source,
                                           const SearchOptions& options, const SearchGuides& guides,
                                           std::vector<int64_t> streams, const ChooseTokens& choose);

/// Host vector -> tensor on `device` (small per-step index/token/score vectors).
torch::Tensor to_tensor(const std::vector<int64_t>& values, const torch::Device& device);
torch::Tensor to_tensor(const std::vector<float>& values, const torch::Device& device);

/// Copies a small tensor to a host vector (int64 or float).
std::vector<int64_t> to_int64_vector(const torch::Tensor& tensor);
std::vector<float> to_float_vector(const torch::Tensor& tensor);

/// Rows appended step after step to one growing tensor (doubling its capacity), so that
/// a hypothesis's rows from every step are one index_select away and a step copies only
/// its own rows: the work of keeping a history grows linearly with its length.
class RowStore {
 public:
  /// Appends `rows` [n, ...] after the rows appended before.
  void append(const torch::Tensor& rows);
  /// The rows at `indices`, [k, ...].
  torch::Tensor gather(const std::vector<int64_t>& indices) const;

 private:
  torch::Tensor buffer_;  // [capacity, ...]
  int64_t used_ = 0;
};

/// Everything a search keeps per row besides the model's own state: per step only the new
/// token, its log-prob, the row it extends (a back-pointer) and, when asked for, the
/// attention the step read; a hypothesis is traced back from its last row when it is
/// finished or cut (Marian's traceback). The coverage so far is kept per row.
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
  double log_prob(int64_t row) const { return log_probs_[row]; }

 private:
  // One advance(): per new row, the old row it extends and what it added; the step's
  // attention rows are stored under the old rows, from store offset `attention_offset`.
  struct Step {
    std::vector<int32_t> parent;
    std::vector<int32_t> token;
    std::vector<float> token_log_prob;
    int64_t attention_offset = 0;
  };
  // Row `row`'s tokens and log-probs, oldest first, and per step the store row of the
  // attention it read.
  struct Trace {
    std::vector<int> tokens;
    std::vector<float> token_log_probs;
    std::vector<int64_t> attention_rows;
  };
  Trace trace(int64_t row) const;
  Hypothesis make(Trace trace, double log_prob, bool finished, const StepOutput* eos_step, int64_t row,
                  const torch::Tensor& coverage, const SourceInfo& source, const SearchOptions& options) const;

  std::vector<Step> steps_;
  std::vector<double> log_probs_;  // per current row
  bool keep_attention_, keep_layer_attention_, track_coverage_;
  int64_t stored_rows_ = 0;             // rows in each attention store
  RowStore attention_;                  // [all steps' rows, S]
  std::vector<RowStore> layer_attention_;  // per layer [all steps' rows, H, S]
  torch::Tensor coverage_;              // [rows, S] attention mass so far
};

}  // namespace nmt::search_detail
