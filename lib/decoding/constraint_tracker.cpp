#include "constraint_tracker.h"

#include "nmt/base/error.h"
#include "nmt/decoding/search.h"

namespace nmt::search_detail {

ConstraintTracker::ConstraintTracker(std::vector<std::vector<int>> phrases) : phrases_(std::move(phrases)) {
  static_assert(SearchGuides::kMaxConstraints <= 64, "one bit of all_ per phrase");
  if (phrases_.size() > SearchGuides::kMaxConstraints)
    throw Error("search: at most " + std::to_string(SearchGuides::kMaxConstraints) + " constraints per sentence, got " +
                std::to_string(phrases_.size()));
  for (size_t c = 0; c < phrases_.size(); ++c) {
    if (phrases_[c].empty()) throw Error("search: an empty constraint");
    all_ |= uint64_t{1} << c;
  }
}

ConstraintProgress ConstraintTracker::advance(ConstraintProgress progress, int64_t token) const {
  if (progress.partial >= 0) {
    const auto& phrase = phrases_[static_cast<size_t>(progress.partial)];
    if (phrase[static_cast<size_t>(progress.written)] == token) {
      if (++progress.written == static_cast<int32_t>(phrase.size())) {
        progress.met |= uint64_t{1} << progress.partial;
        progress.partial = -1;
        progress.written = 0;
      }
      return progress;
    }
    progress.partial = -1;
    progress.written = 0;
  }
  for (size_t c = 0; c < phrases_.size(); ++c) {
    if ((progress.met >> c) & 1U || phrases_[c].front() != token) continue;
    if (phrases_[c].size() == 1) {
      progress.met |= uint64_t{1} << c;
    } else {
      progress.partial = static_cast<int32_t>(c);
      progress.written = 1;
    }
    break;
  }
  return progress;
}

int ConstraintTracker::covered(const ConstraintProgress& progress) const {
  int tokens = progress.written;
  for (size_t c = 0; c < phrases_.size(); ++c)
    if ((progress.met >> c) & 1U) tokens += static_cast<int>(phrases_[c].size());
  return tokens;
}

std::vector<int64_t> ConstraintTracker::useful_tokens(const ConstraintProgress& progress) const {
  std::vector<int64_t> tokens;
  if (progress.partial >= 0)
    tokens.push_back(phrases_[static_cast<size_t>(progress.partial)][static_cast<size_t>(progress.written)]);
  for (size_t c = 0; c < phrases_.size(); ++c)
    if (!((progress.met >> c) & 1U) && static_cast<int32_t>(c) != progress.partial) tokens.push_back(phrases_[c].front());
  return tokens;
}

}  // namespace nmt::search_detail
