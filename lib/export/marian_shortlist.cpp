// Marian's binary shortlist file, read and written: torch-free and Shortlist-free, so that the
// fuzz harness takes it alone (what it means in our ids: marian_shortlist_ids.cpp).
#include "nmt/export/marian_shortlist.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "nmt/base/error.h"

namespace nmt {
namespace {

constexpr size_t kHeaderWords = 6;  // magic, checksum, first, best, offset count, target count
constexpr size_t kHeaderBytes = kHeaderWords * sizeof(uint64_t);

uint64_t word_at(std::string_view bytes, size_t index) {
  uint64_t value = 0;
  std::memcpy(&value, bytes.data() + index * sizeof(uint64_t), sizeof value);
  return value;
}

void append_words(std::string& out, const uint64_t* words, size_t count) {
  out.append(reinterpret_cast<const char*>(words), count * sizeof(uint64_t));
}

std::string hex(uint64_t value) {
  std::ostringstream text;
  text << "0x" << std::hex << value;
  return text.str();
}

}  // namespace

bool is_marian_binary_shortlist(std::string_view bytes) {
  return bytes.size() >= sizeof(uint64_t) && word_at(bytes, 0) == kMarianShortlistMagic;
}

uint64_t marian_shortlist_checksum(std::string_view bytes) {
  // marian-dev's util::hashMem<uint64_t, uint64_t> over whole words after the magic and the
  // checksum; std::hash<uint64_t> is the identity on the 64-bit platforms Marian builds on.
  uint64_t seed = 0;
  const size_t words = bytes.size() / sizeof(uint64_t);
  for (size_t i = 2; i < words; ++i) seed ^= word_at(bytes, i) + 0x9e3779b9 + (seed << 6) + (seed >> 2);
  return seed;
}

MarianLexicalShortlist read_marian_shortlist(std::string_view bytes, const std::string& file_name,
                                             int64_t source_vocab, int64_t target_vocab) {
  if (bytes.size() < kHeaderBytes || !is_marian_binary_shortlist(bytes))
    throw Error(file_name + ": not a Marian binary shortlist (no magic " + hex(kMarianShortlistMagic) +
                " at its start; Marian's text shortlists are made binary by marian-conv --shortlist)");
  MarianLexicalShortlist shortlist;
  shortlist.first = word_at(bytes, 2);
  shortlist.best = word_at(bytes, 3);
  const uint64_t offset_count = word_at(bytes, 4), target_count = word_at(bytes, 5);
  const uint64_t room = (bytes.size() - kHeaderBytes);
  if (offset_count > room / sizeof(uint64_t) || target_count > room / sizeof(uint32_t) ||
      kHeaderBytes + offset_count * sizeof(uint64_t) + target_count * sizeof(uint32_t) != bytes.size())
    throw Error(file_name + ": " + std::to_string(bytes.size()) + " bytes, but its header says " +
                std::to_string(offset_count) + " offsets and " + std::to_string(target_count) +
                " targets (a file cut short or written otherwise)");
  if (const auto sum = marian_shortlist_checksum(bytes); sum != word_at(bytes, 1))
    throw Error(file_name + ": checksum " + hex(sum) + " where the file says " + hex(word_at(bytes, 1)) +
                " (a damaged file)");
  if (offset_count == 0) throw Error(file_name + ": no offsets (a Marian shortlist has one per source id, and an end)");
  if (static_cast<int64_t>(offset_count) != source_vocab + 1)
    throw Error(file_name + ": lists for " + std::to_string(static_cast<int64_t>(offset_count) - 1) +
                " source ids, the model's source vocabulary has " + std::to_string(source_vocab) +
                " (a shortlist for another model?)");
  shortlist.offsets.resize(offset_count);
  std::memcpy(shortlist.offsets.data(), bytes.data() + kHeaderBytes, offset_count * sizeof(uint64_t));
  shortlist.targets.resize(target_count);
  if (target_count > 0)  // an empty vector's data() may be null, which memcpy may not be given
    std::memcpy(shortlist.targets.data(), bytes.data() + kHeaderBytes + offset_count * sizeof(uint64_t),
                target_count * sizeof(uint32_t));
  for (size_t s = 0; s + 1 < offset_count; ++s)
    if (shortlist.offsets[s] > shortlist.offsets[s + 1])
      throw Error(file_name + ": the offsets of source ids " + std::to_string(s) + " and " + std::to_string(s + 1) +
                  " decrease");
  if (shortlist.offsets.back() != target_count)
    throw Error(file_name + ": its offsets end at " + std::to_string(shortlist.offsets.back()) + ", not at its " +
                std::to_string(target_count) + " targets");
  for (size_t i = 0; i < target_count; ++i)
    if (static_cast<int64_t>(shortlist.targets[i]) >= target_vocab)
      throw Error(file_name + ": target id " + std::to_string(shortlist.targets[i]) +
                  " outside the model's target vocabulary of " + std::to_string(target_vocab) +
                  " (a shortlist for another model?)");
  return shortlist;
}

std::string marian_shortlist_bytes(const MarianLexicalShortlist& shortlist) {
  if (shortlist.offsets.empty() || shortlist.offsets.front() != 0 || shortlist.offsets.back() != shortlist.targets.size())
    throw Error("a Marian shortlist's offsets must start at 0 and end at its targets' count");
  const uint64_t header[kHeaderWords] = {kMarianShortlistMagic, 0, shortlist.first, shortlist.best,
                                         shortlist.offsets.size(), shortlist.targets.size()};
  std::string bytes;
  bytes.reserve(kHeaderBytes + shortlist.offsets.size() * 8 + shortlist.targets.size() * 4);
  append_words(bytes, header, kHeaderWords);
  append_words(bytes, shortlist.offsets.data(), shortlist.offsets.size());
  bytes.append(reinterpret_cast<const char*>(shortlist.targets.data()), shortlist.targets.size() * sizeof(uint32_t));
  const uint64_t sum = marian_shortlist_checksum(bytes);
  std::memcpy(bytes.data() + sizeof(uint64_t), &sum, sizeof sum);
  return bytes;
}

MarianLexicalShortlist marian_shortlist_from_text(const std::function<bool(std::string&)>& next_line,
                                                  const std::string& file_name, int64_t source_vocab,
                                                  const MarianPieceIds& source_id, const MarianPieceIds& target_id,
                                                  const MarianShortlistCut& cut) {
  std::vector<std::unordered_map<uint32_t, float>> probabilities(static_cast<size_t>(source_vocab));
  std::string line;
  for (int64_t number = 1; next_line(line); ++number) {
    std::istringstream fields(line);
    std::string target, source, rest;
    float probability = 0;
    if (!(fields >> target)) continue;  // an empty line
    if (!(fields >> source >> probability) || (fields >> rest) || !std::isfinite(probability))
      throw Error(file_name + ":" + std::to_string(number) +
                  ": not \"target source probability\" (a text lexical shortlist's line)");
    if (source == "NULL" || target == "NULL") continue;
    const auto s = source_id(source);
    if (s >= probabilities.size())
      throw Error(file_name + ":" + std::to_string(number) + ": source id " + std::to_string(s) +
                  " outside the vocabulary of " + std::to_string(source_vocab));
    probabilities[s][target_id(target)] = probability;  // the last listing wins, as in Marian
  }
  MarianLexicalShortlist marian;
  marian.first = cut.first;
  marian.best = cut.best;
  for (const auto& listed : probabilities) {
    marian.offsets.push_back(marian.targets.size());
    std::vector<std::pair<float, uint32_t>> by_probability;
    for (const auto& [target, probability] : listed)
      if (probability > cut.threshold) by_probability.emplace_back(probability, target);
    std::sort(by_probability.begin(), by_probability.end(), std::greater<>());
    if (by_probability.size() > cut.best) by_probability.resize(cut.best);
    std::vector<uint32_t> kept;
    for (const auto& [probability, target] : by_probability) kept.push_back(target);
    std::sort(kept.begin(), kept.end());
    marian.targets.insert(marian.targets.end(), kept.begin(), kept.end());
  }
  marian.offsets.push_back(marian.targets.size());
  return marian;
}

}  // namespace nmt
