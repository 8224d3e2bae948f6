#pragma once
// Decoding algorithms over the Seq2SeqModel interface: beam search, greedy search and
// forced decoding. They know nothing about model families; everything goes through
// encode / initial_state / step.
//
// Conventions shared by all three:
//  * source is [B, S] int64, right-padded with 0, every row ending in eos.
//  * pad and bos are never generated (their log-probs are set to -inf); the model's
//    distribution is not renormalised afterwards.
//  * "length" of a hypothesis = generated tokens excluding eos. The maximum length of a
//    sentence is floor(max_length_ratio * source_length + max_length_extra), where
//    source_length counts the source tokens before its eos. A hypothesis may reach that
//    many tokens and then end with eos; at that last step only eos is allowed.
//  * Attention is returned trimmed to the sentence's real source positions (eos
//    included, padding excluded), so batching never changes a result.
//  * Penalties (GNMT, Wu et al. 2016): score = log_prob / ((5 + L) / 6)^alpha + cp, with
//    L = generated tokens including eos and cp = coverage * sum_i log(min(c_i, 1)), c_i
//    the attention mass source position i received over all generated tokens.
//
// All functions run under torch::NoGradGuard; putting the model in eval mode is the
// caller's job.
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nmt/decoding/search_options.h"
#include "nmt/models/model.h"

namespace nmt {

/// What one batch brings beside its source, one entry per source row: the batch's data,
/// apart from the settings (SearchOptions) that many batches share. Each list empty: none.
struct SearchGuides {
  /// Per source row, its line number in the input: the random stream of sampling. Empty:
  /// the row's index in the batch.
  std::vector<int64_t> line_numbers;
  /// Per source row, target tokens every hypothesis of that row starts with (empty: none).
  /// Forced, then free search; their log-probs count in the score like any token's, and the
  /// length limit is raised to the prefix's length where it is shorter. Empty: no prefixes.
  std::vector<std::vector<int>> prefixes;
  /// Per source row, phrases (token sequences) every hypothesis must contain, in any order,
  /// each as a contiguous run: lexically constrained beam search (beam_search only). A
  /// sentence whose length limit leaves no room for them all returns what it has (cut).
  /// At most kMaxConstraints phrases per row. Empty: no constraints.
  std::vector<std::vector<std::vector<int>>> constraints;
  /// Phrases one row may be constrained to (the search tracks each as a bit of a word).
  static constexpr size_t kMaxConstraints = 64;
};

struct Hypothesis {
  std::vector<int> tokens;             // without bos, without the final eos
  bool finished = false;               // ended with eos (false if cut at max length)
  double score = 0;                    // final score, penalties applied (what ranking uses)
  double log_prob = 0;                 // raw sum of token log-probs, eos included
  std::vector<float> token_log_probs;  // one per generated token, eos included when finished
  /// [T', S'] float with T' = token_log_probs.size() and S' the real source positions;
  /// set when keep_attention and the model has_attention().
  torch::Tensor attention;
  /// Per decoder layer [T', H, S'] when keep_attention and attention_layers() > 0.
  std::vector<torch::Tensor> layer_attention;
};

/// The maximum number of target tokens (eos excluded) for a source of `source_length`
/// tokens (eos excluded).
int64_t max_target_length(int64_t source_length, const SearchOptions& options);

/// Beam search, batched over sentences. Returns, per sentence in input order, up to
/// nbest distinct hypotheses sorted by score, best first. Hypotheses cut at the maximum
/// length (finished = false) are returned only for sentences where none finished.
///
/// Stopping rule: a sentence stops once it holds nbest finished hypotheses and no open
/// one can still beat the worst of them. Future tokens only lower the log-prob, so with
/// alpha > 0 the best an open hypothesis can reach is log_prob / lp(max length + 1) (and
/// a coverage penalty is never positive): an exact bound, not the usual heuristic. Hence
/// beam 1 equals greedy_search when alpha == 0 and coverage == 0; with a penalty,
/// beam 1 may keep searching past greedy's eos and return a better-scoring hypothesis.
std::vector<std::vector<Hypothesis>> beam_search(Seq2SeqModel& model, const torch::Tensor& source,
                                                 const SearchOptions& options, const SearchGuides& guides = {});

/// Argmax at every step, batched. One hypothesis per sentence, scored like beam search's.
/// Uses min_length, the length limits, the penalties and keep_attention from `options`.
std::vector<Hypothesis> greedy_search(Seq2SeqModel& model, const torch::Tensor& source,
                                      const SearchOptions& options, const SearchGuides& guides = {});

/// Random sampling (options.sampling): options.nbest samples per sentence, each drawn
/// token by token from its own random stream (seed, line number, sample index); scored
/// like greedy search's hypotheses, with the model's own log-probs (before temperature,
/// top-k and top-p), and returned best score first. top_k 1 gives greedy search's output.
std::vector<std::vector<Hypothesis>> sampling_search(Seq2SeqModel& model, const torch::Tensor& source,
                                                     const SearchOptions& options, const SearchGuides& guides = {});

/// Teacher-forces target + eos through step(). source: [1, S]; target without bos/eos.
/// Returns the target as a finished hypothesis with score = log_prob (no penalties, no
/// tokens forbidden). Throws nmt::Error for ids outside the vocabulary.
Hypothesis force_decode(Seq2SeqModel& model, const torch::Tensor& source,
                        const std::vector<int>& target, bool keep_attention);

}  // namespace nmt
