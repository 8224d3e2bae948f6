// Batched beam search over the Seq2SeqModel interface, in the style of fairseq and
// CTranslate2:
//  * the encoder runs once; the first step runs at batch size (every sentence has only
//    bos), and its candidates expand the decoder state to `beam` rows per sentence with
//    DecoderState::select (CTranslate2's expand_after_first_step); after that, rows are
//    reordered by beam origin after every step;
//  * each step scores all rows at once and takes the top 2 * beam candidates per
//    sentence over [beam * V] (best_tokens.h: no [rows, V] log-softmax is written);
//  * eos candidates among the top `beam` ranks become finished hypotheses, and the
//    beam is refilled with the best non-eos candidates, so finishing never starves it;
//  * a sentence stops as described in search.h and leaves the batch (select), so the
//    work shrinks as sentences finish.
// Candidates are ranked by raw log-prob; penalties are applied when a hypothesis is
// finalised (hypothesis_score).
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "nmt/base/error.h"
#include "nmt/decoding/best_tokens.h"
#include "nmt/decoding/search.h"
#include "nmt/text/tokenizer.h"
#include "constraint_tracker.h"
#include "search_internal.h"

namespace nmt {
namespace {

using search_detail::ConstraintProgress;
using search_detail::ConstraintTracker;
using search_detail::RowHistory;
using search_detail::SourceInfo;

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// What one sentence has found so far.
struct SentenceResult {
  SourceInfo source;
  std::vector<Hypothesis> finished;  // best first, at most nbest
  std::vector<Hypothesis> cut;       // unfinished, best first; used only if nothing finished
};

// Inserts by score (best first, ties in arrival order), keeping at most `limit`.
void insert_ranked(std::vector<Hypothesis>& list, Hypothesis h, size_t limit) {
  auto position = std::upper_bound(list.begin(), list.end(), h.score,
                                   [](double score, const Hypothesis& x) { return score > x.score; });
  if (static_cast<size_t>(position - list.begin()) >= limit) return;
  list.insert(position, std::move(h));
  if (list.size() > limit) list.pop_back();
}

// One step's top candidates per active sentence, on the host, each [groups, k].
struct Candidates {
  int64_t k = 0;
  int64_t vocab = 0;
  std::vector<float> scores;           // cumulative log-prob of the extended hypothesis
  std::vector<int64_t> flat_index;     // beam_slot * vocab + token
  std::vector<float> token_log_probs;  // the candidate token's own log-prob
  // Constrained search: per row of a constrained sentence, the tokens that cover one more
  // constraint token and the row's own best token (the top-k may hold none of them).
  struct Extra {
    int64_t row, token;
    float score, token_log_prob;
  };
  std::vector<Extra> extras;
};

// The rows of the next step, per row: which old row it extends and how.
struct Continuation {
  std::vector<int64_t> origin;
  std::vector<int64_t> tokens;
  std::vector<float> scores;  // -inf: empty slot, never extended
  std::vector<float> token_log_probs;
  std::vector<ConstraintProgress> progress;  // constrained search only
};

class BeamSearch {
 public:
  BeamSearch(Seq2SeqModel& model, const torch::Tensor& source, const SearchOptions& options,
             const std::vector<SourceInfo>& sources)
      : model_(model),
        options_(options),
        source_(source),
        device_(source.device()),
        best_tokens_kernel_(best_tokens_kernel_for(device_)),
        beam_(options.beam),
        sources_(sources),
        history_(source.size(0), options.keep_attention && model.has_attention(),
                 options.keep_attention && model.attention_layers() > 0,
                 options.coverage > 0 && model.has_attention()) {
    for (const auto& info : sources) {
      sentences_.push_back({info, {}, {}});
      trackers_.emplace_back(info.constraints);
      constrained_ = constrained_ || !info.constraints.empty();
    }
  }

  std::vector<std::vector<Hypothesis>> run() {
    start();
    for (int64_t step = 0; !active_.empty(); ++step) {
      StepOutput out = model_.step(search_detail::to_tensor(tokens_, device_), *state_);
      const Candidates candidates = top_candidates(out, step);
      Continuation next;
      std::vector<uint8_t> done(active_.size());
      for (size_t g = 0; g < active_.size(); ++g) {
        choose(g, candidates, out, next);
        done[g] = sentence_done(g, next, step);
      }
      advance(next, done, out);
    }
    std::vector<std::vector<Hypothesis>> results;
    for (auto& sentence : sentences_)
      results.push_back(std::move(sentence.finished.empty() ? sentence.cut : sentence.finished));
    return results;
  }

 private:
  // Encodes once; one row per sentence until the first step's candidates expand it.
  void start() {
    const int64_t batch = source_.size(0);
    state_ = model_.initial_state(model_.encode(source_));
    state_->want_attention = history_.needs_attention();
    for (int64_t b = 0; b < batch; ++b) {
      active_.push_back(b);
      tokens_.push_back(SpecialIds::kBos);
      scores_.push_back(0.0f);
    }
    if (constrained_) progress_.assign(static_cast<size_t>(batch), ConstraintProgress{});
  }

  // Two stages, the same candidates as one top-k over each sentence's [rows * V]
  // scores: every one of a sentence's best 2 * beam is among its row's best 2 * beam.
  // The first stage (best_tokens) reads the scores once and normalises only what it
  // keeps; the second ranks each sentence's rows * 2 * beam on the host.
  Candidates top_candidates(const StepOutput& out, int64_t step) const {
    const int64_t vocab = out.scores.values().size(1);
    if (vocab <= SpecialIds::kEos) throw Error("beam_search: the vocabulary is too small");
    std::vector<int64_t> sentence_of_row;
    for (int64_t sentence : active_) sentence_of_row.insert(sentence_of_row.end(), rows_, sentence);
    const auto forbidden =
        search_detail::forbidden_tokens(step, options_.min_length, sources_, sentence_of_row, vocab);
    const int64_t per_row = std::min(2 * beam_, vocab);
    const auto best = best_tokens(out.scores, per_row, forbidden, best_tokens_kernel_);

    const int64_t pool = rows_ * per_row;  // a sentence's candidates: slot * per_row + rank
    Candidates candidates;
    candidates.k = std::min(2 * beam_, pool);
    candidates.vocab = vocab;
    std::vector<int64_t> order(static_cast<size_t>(pool));
    for (size_t g = 0; g < active_.size(); ++g) {
      const int64_t first_row = static_cast<int64_t>(g) * rows_, first = first_row * per_row;
      auto score = [&](int64_t position) {
        const float sum = scores_[first_row + position / per_row] + best.log_probs[first + position];
        return std::isnan(sum) ? kMinusInf : sum;
      };
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + candidates.k, order.end(), [&](int64_t a, int64_t b) {
        const float score_a = score(a), score_b = score(b);
        return score_a > score_b || (score_a == score_b && a < b);
      });
      for (int64_t i = 0; i < candidates.k; ++i) {
        const int64_t position = order[static_cast<size_t>(i)];
        candidates.scores.push_back(score(position));
        candidates.flat_index.push_back(position / per_row * vocab + best.tokens[first + position]);
        candidates.token_log_probs.push_back(best.log_probs[first + position]);
      }
    }
    if (constrained_) candidates.extras = constraint_candidates(out.scores, best, forbidden);
    return candidates;
  }

  // Candidates.extras: the scores of the tokens each constrained row may want besides the top-k.
  std::vector<Candidates::Extra> constraint_candidates(const NextTokenScores& scores,
                                                       const BestTokens& best,
                                                       const ForbiddenTokens& forbidden) const {
    const int64_t vocab = scores.values().size(1);
    std::vector<int64_t> rows, tokens;
    for (size_t g = 0; g < active_.size(); ++g) {
      const auto& tracker = trackers_[active_[g]];
      if (tracker.empty()) continue;
      for (int64_t row = static_cast<int64_t>(g) * rows_; row < static_cast<int64_t>(g + 1) * rows_; ++row) {
        if (scores_[row] == kMinusInf) continue;
        for (const auto token : tracker.useful_tokens(progress_[row])) {
          if (token >= vocab) throw Error("beam_search: constraint token " + std::to_string(token) + " is outside the vocabulary");
          rows.push_back(row);
          tokens.push_back(token);
        }
        rows.push_back(row);
        tokens.push_back(best.tokens[row * best.k]);
      }
    }
    std::vector<Candidates::Extra> extras;
    if (rows.empty()) return extras;
    const auto picked = search_detail::to_float_vector(
        scores.values().index({search_detail::to_tensor(rows, device_), search_detail::to_tensor(tokens, device_)}));
    for (size_t i = 0; i < rows.size(); ++i) {
      const float log_prob = forbidden.allows(rows[i], tokens[i]) ? best.log_prob(rows[i], picked[i]) : kMinusInf;
      extras.push_back({rows[i], tokens[i], scores_[rows[i]] + log_prob, log_prob});
    }
    return extras;
  }

  // Finalises group g's eos candidates and appends its beam_ rows to `next`.
  void choose(size_t g, const Candidates& c, const StepOutput& out, Continuation& next) {
    if (!trackers_[active_[g]].empty()) return choose_constrained(g, c, out, next);
    SentenceResult& sentence = sentences_[active_[g]];
    const auto first_row = static_cast<int64_t>(g) * rows_;
    int64_t open = 0;
    for (int64_t rank = 0; rank < c.k && open < beam_; ++rank) {
      const size_t i = g * c.k + rank;
      if (c.scores[i] == kMinusInf) break;  // sorted: only forbidden ones follow
      const int64_t row = first_row + c.flat_index[i] / c.vocab;
      const int64_t token = c.flat_index[i] % c.vocab;
      if (token == SpecialIds::kEos) {
        // Only eos among the top beam ranks finishes, as in fairseq: lower-ranked ones
        // would not have survived a plain beam either.
        if (rank < beam_)
          insert_ranked(sentence.finished,
                        history_.finish(row, c.token_log_probs[i], out, sentence.source, options_),
                        options_.nbest);
        continue;
      }
      push(next, row, token, c.scores[i], c.token_log_probs[i]);
      ++open;
    }
    if (open == 0 && sentence.finished.empty()) cut_live_rows(sentence, first_row);
    for (; open < beam_; ++open) push(next, first_row, SpecialIds::kEos, kMinusInf, 0.0f);
  }

  // No continuation is allowed (e.g. at the length limit with eos still forbidden):
  // the live rows become unfinished hypotheses.
  void cut_live_rows(SentenceResult& sentence, int64_t first_row) {
    for (int64_t row = first_row; row < first_row + rows_; ++row)
      if (scores_[row] != kMinusInf)
        insert_ranked(sentence.cut, history_.cut(row, sentence.source, options_), options_.nbest);
  }

  // Dynamic beam allocation (Post & Vilar 2018), simplified: the candidates are the top-k
  // plus, per row, every token that covers one more constraint token and the row's best
  // token; they are grouped into banks by constraint tokens covered, and the beam is filled
  // from the banks in turn, most covered first, each bank's best first. So hypotheses that
  // have placed more of the constraints keep a place even when they score lower, and eos
  // finishes only a row whose constraints are all met.
  void choose_constrained(size_t g, const Candidates& c, const StepOutput& out, Continuation& next) {
    struct Option {
      int64_t row, token;
      float score, token_log_prob;
      ConstraintProgress progress;
    };
    SentenceResult& sentence = sentences_[active_[g]];
    const auto& tracker = trackers_[active_[g]];
    const int64_t first_row = static_cast<int64_t>(g) * rows_;
    std::map<int, std::vector<Option>, std::greater<int>> banks;
    std::set<std::pair<int64_t, int64_t>> seen;
    std::set<int64_t> finished_rows;
    auto consider = [&](int64_t row, int64_t token, float score, float token_log_prob, bool may_finish) {
      if (score == kMinusInf) return;
      if (token == SpecialIds::kEos) {
        if (may_finish && tracker.all_met(progress_[row]) && finished_rows.insert(row).second)
          insert_ranked(sentence.finished, history_.finish(row, token_log_prob, out, sentence.source, options_),
                        options_.nbest);
        return;
      }
      if (!seen.insert({row, token}).second) return;
      const auto progress = tracker.advance(progress_[row], token);
      banks[tracker.covered(progress)].push_back({row, token, score, token_log_prob, progress});
    };
    for (int64_t rank = 0; rank < c.k; ++rank) {
      const size_t i = g * c.k + rank;
      consider(first_row + c.flat_index[i] / c.vocab, c.flat_index[i] % c.vocab, c.scores[i], c.token_log_probs[i],
               rank < beam_);
    }
    for (const auto& extra : c.extras)
      if (extra.row >= first_row && extra.row < first_row + rows_)
        consider(extra.row, extra.token, extra.score, extra.token_log_prob, true);
    const auto by_score = [](const Option& a, const Option& b) { return a.score > b.score; };
    for (auto& [covered, bank] : banks) std::stable_sort(bank.begin(), bank.end(), by_score);
    std::vector<Option> chosen;
    std::map<int, size_t> taken;
    for (bool more = true; more && static_cast<int64_t>(chosen.size()) < beam_;) {
      more = false;
      for (auto& [covered, bank] : banks) {
        auto& next_in_bank = taken[covered];
        if (next_in_bank >= bank.size() || static_cast<int64_t>(chosen.size()) >= beam_) continue;
        chosen.push_back(bank[next_in_bank++]);
        more = true;
      }
    }
    std::stable_sort(chosen.begin(), chosen.end(), by_score);
    for (const auto& option : chosen) push(next, option.row, option.token, option.score, option.token_log_prob, option.progress);
    auto open = static_cast<int64_t>(chosen.size());
    if (open == 0 && sentence.finished.empty()) cut_live_rows(sentence, first_row);
    for (; open < beam_; ++open) push(next, first_row, SpecialIds::kEos, kMinusInf, 0.0f);
  }

  void push(Continuation& next, int64_t origin, int64_t token, float score, float token_log_prob,
            ConstraintProgress progress = {}) const {
    next.origin.push_back(origin);
    next.tokens.push_back(token);
    next.scores.push_back(score);
    next.token_log_probs.push_back(token_log_prob);
    if (constrained_) next.progress.push_back(progress);
  }

  // After step `step`, group g's open rows (always beam_ in `next`) hold step + 1 tokens.
  bool sentence_done(size_t g, const Continuation& next, int64_t step) const {
    const SentenceResult& sentence = sentences_[active_[g]];
    if (step + 1 > sentence.source.max_length) return true;  // the eos-only step just ran
    if (sentence.finished.size() < static_cast<size_t>(options_.nbest)) {
      return next.scores[g * beam_] == kMinusInf;  // nothing open
    }
    const double worst_kept = sentence.finished.back().score;
    for (int64_t j = 0; j < beam_; ++j) {
      const size_t i = g * beam_ + j;
      if (next.scores[i] == kMinusInf) break;
      const double log_prob = history_.log_prob(next.origin[i]) + next.token_log_probs[i];
      if (search_detail::best_reachable_score(log_prob, step + 1, sentence.source.max_length,
                                              options_) > worst_kept)
        return false;
    }
    return true;
  }

  // Moves to the next step's rows, dropping the groups of finished sentences.
  void advance(const Continuation& next, const std::vector<uint8_t>& done, const StepOutput& out) {
    Continuation kept;
    std::vector<int64_t> active;
    for (size_t g = 0; g < active_.size(); ++g) {
      if (done[g]) continue;
      active.push_back(active_[g]);
      for (size_t i = g * beam_; i < (g + 1) * beam_; ++i)
        push(kept, next.origin[i], next.tokens[i], next.scores[i], next.token_log_probs[i],
             constrained_ ? next.progress[i] : ConstraintProgress{});
    }
    const bool dropped = active.size() < active_.size();
    active_ = std::move(active);
    if (active_.empty()) return;
    bool identity = !dropped;
    for (size_t i = 0; identity && i < kept.origin.size(); ++i)
      identity = kept.origin[i] == static_cast<int64_t>(i);
    const auto index = search_detail::to_tensor(kept.origin, device_);
    history_.advance(kept.origin, index, identity, kept.tokens, kept.token_log_probs, out);
    // Origins stay within their sentence's group, so one select both drops sentences
    // and reorders hypotheses (sentence tensors are equal across a group); after the
    // first step it also expands each sentence to beam_ rows.
    const bool expanding = rows_ != beam_;
    rows_ = beam_;
    if (dropped || expanding) {
      state_->select(index);
    } else if (!identity) {
      state_->reorder(index);
    }
    tokens_ = std::move(kept.tokens);
    scores_ = std::move(kept.scores);
    progress_ = std::move(kept.progress);
  }

  Seq2SeqModel& model_;
  const SearchOptions& options_;
  const torch::Tensor& source_;
  const torch::Device device_;
  const KernelChoice best_tokens_kernel_;  // decided once, for the model's device
  const int64_t beam_;
  const std::vector<SourceInfo>& sources_;  // per sentence, as forbidden_tokens reads them
  std::vector<SentenceResult> sentences_;
  std::vector<int64_t> active_;  // sentence of each group of rows_ rows
  int64_t rows_ = 1;             // rows per group: 1 at the first step, then beam_
  DecoderStatePtr state_;
  std::vector<int64_t> tokens_;  // per row: the token to feed next
  std::vector<float> scores_;    // per row: cumulative log-prob, -inf for an empty slot
  RowHistory history_;
  std::vector<ConstraintTracker> trackers_;  // per sentence (empty: unconstrained)
  bool constrained_ = false;                 // any sentence has constraints
  std::vector<ConstraintProgress> progress_;  // per row, constrained search only
};

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(Seq2SeqModel& model, const torch::Tensor& source,
                                                 const SearchOptions& options, const SearchGuides& guides) {
  options.validate();
  torch::NoGradGuard no_grad;
  const auto sources = search_detail::describe_source(source, options, guides);
  return BeamSearch(model, source, options, sources).run();
}

}  // namespace nmt
