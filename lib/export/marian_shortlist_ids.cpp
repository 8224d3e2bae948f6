// Marian's shortlist in our ids and ours in Marian's (export/marian_shortlist.h says what
// each side decodes a sentence over).
#include "nmt/export/marian_shortlist.h"

#include <algorithm>
#include <limits>

#include "nmt/base/error.h"
#include "nmt/text/shortlist.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

constexpr float kUnknownProbability = std::numeric_limits<float>::quiet_NaN();

// Our target ids of a list of Marian's, specials left out, each once, increasing.
std::vector<ShortlistEntry> entries_of(std::vector<int> ids) {
  ids.erase(std::remove_if(ids.begin(), ids.end(), SpecialIds::contains), ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<ShortlistEntry> entries;
  for (const int id : ids) entries.push_back({id, kUnknownProbability});
  return entries;
}

}  // namespace

Shortlist shortlist_from_marian(const MarianLexicalShortlist& marian, const MarianShortlistIds& ids) {
  const auto source_count = static_cast<int64_t>(ids.our_source_id.size());
  const auto target_count = static_cast<int64_t>(ids.our_target_id.size());
  if (marian.source_vocab() != source_count)
    throw Error("a Marian shortlist for " + std::to_string(marian.source_vocab()) + " source ids, the vocabulary has " +
                std::to_string(source_count));
  const auto our_target = [&](uint64_t marian_id) { return ids.our_target_id[static_cast<size_t>(marian_id)]; };
  const auto targets_of = [&](int64_t s) {
    std::vector<int> targets;
    for (auto i = marian.offsets[static_cast<size_t>(s)]; i < marian.offsets[static_cast<size_t>(s) + 1]; ++i)
      targets.push_back(our_target(marian.targets[static_cast<size_t>(i)]));
    return targets;
  };
  Shortlist shortlist(ids.our_source_vocab, ids.our_target_vocab);
  std::vector<int> always;
  for (uint64_t t = 0; t < marian.first && static_cast<int64_t>(t) < target_count; ++t) always.push_back(our_target(t));
  for (int64_t s = 0; s < source_count; ++s) {
    const int ours = ids.our_source_id[static_cast<size_t>(s)];
    auto targets = targets_of(s);
    if (ours == SpecialIds::kEos) {  // every sentence ends with </s>: its list is every line's
      always.insert(always.end(), targets.begin(), targets.end());
      continue;
    }
    if (ids.one_vocabulary && s < target_count) targets.push_back(our_target(static_cast<uint64_t>(s)));
    if (!targets.empty()) shortlist.set_translations(ours, entries_of(std::move(targets)));
  }
  shortlist.set_always(entries_of(std::move(always)));
  return shortlist;
}

MarianLexicalShortlist marian_shortlist_from(const Shortlist& shortlist) {
  MarianLexicalShortlist marian;
  marian.first = SpecialIds::kEos + 1;  // what a vocabulary part of ours always holds
  const auto ids_of = [](const std::vector<ShortlistEntry>& entries) {
    std::vector<uint32_t> ids;
    for (const auto& entry : entries) ids.push_back(static_cast<uint32_t>(entry.target));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
  };
  for (int s = 0; s < shortlist.source_vocab(); ++s) {
    marian.offsets.push_back(marian.targets.size());
    const auto ids = ids_of(s == SpecialIds::kEos ? shortlist.always() : shortlist.translations(s));
    marian.targets.insert(marian.targets.end(), ids.begin(), ids.end());
    if (s != SpecialIds::kEos) marian.best = std::max<uint64_t>(marian.best, ids.size());
  }
  // Marian's check of a file (contentCheck) wants every offset but the last below the target
  // count, so the last source id may not list nothing: it lists </s>, already below `first`.
  if (marian.offsets.back() == marian.targets.size()) marian.targets.push_back(SpecialIds::kEos);
  marian.offsets.push_back(marian.targets.size());
  return marian;
}

}  // namespace nmt
