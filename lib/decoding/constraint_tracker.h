#pragma once
// Lexical constraints of one sentence (phrases every hypothesis must contain, in any
// order, each as a contiguous run of tokens) and a hypothesis's progress through them
// (lib/ only; beam_search.cpp). At most 64 phrases per sentence (a bit each).
#include <cstdint>
#include <vector>

namespace nmt::search_detail {

struct ConstraintProgress {
  uint64_t met = 0;     // bit c: phrase c has appeared
  int32_t partial = -1;  // the phrase being written, or -1
  int32_t written = 0;   // its tokens written so far
};

class ConstraintTracker {
 public:
  ConstraintTracker() = default;
  explicit ConstraintTracker(std::vector<std::vector<int>> phrases);

  bool empty() const { return phrases_.empty(); }
  /// The progress after appending `token`. A phrase interrupted by another token is
  /// abandoned (its tokens so far no longer count); a token may then start another phrase.
  ConstraintProgress advance(ConstraintProgress progress, int64_t token) const;
  bool all_met(const ConstraintProgress& progress) const { return progress.met == all_; }
  /// Constraint tokens covered: all tokens of the phrases met, plus those of the partial one.
  int covered(const ConstraintProgress& progress) const;
  /// The tokens that would cover one more constraint token: the partial phrase's next one
  /// and the first token of every phrase neither met nor being written.
  std::vector<int64_t> useful_tokens(const ConstraintProgress& progress) const;

 private:
  std::vector<std::vector<int>> phrases_;
  uint64_t all_ = 0;
};

}  // namespace nmt::search_detail
