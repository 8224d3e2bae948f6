#include "nmt/text/shortlist.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <unordered_map>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/base/stable_hash.h"
#include "nmt/text/corpus.h"
#include "nmt/text/lexical_translation.h"
#include "nmt/text/line_reader.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

constexpr const char* kFirstLine = "nmt-shortlist 1";
constexpr const char* kSourceHashKey = "source_vocabulary";
constexpr const char* kTargetHashKey = "target_vocabulary";
constexpr const char* kUnknownProbability = "-";

// An [about] value on one line: tabs and line breaks become spaces.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return text;
}

// A piece as the file holds it: a tab or a line break in it would break the format.
std::string piece_text(const Tokenizer& tokenizer, int id) {
  auto piece = tokenizer.piece(id);
  if (piece.find_first_of("\t\n\r") != std::string::npos || piece.empty())
    throw Error("shortlist: piece " + std::to_string(id) + " of the vocabulary is empty or holds a tab or a line break");
  return piece;
}

// "-" where it is not known (a shortlist read from a file that has none: Marian's binary ones).
std::string probability_text(float p) {
  if (std::isnan(p)) return kUnknownProbability;
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", static_cast<double>(p));
  return text;
}

// Pieces to ids of one vocabulary, and where a line names a piece it lacks.
class PieceIds {
 public:
  PieceIds(const Tokenizer& tokenizer, std::string side) : side_(std::move(side)) {
    for (int id = 0; id < tokenizer.vocab_size(); ++id) ids_.emplace(tokenizer.piece(id), id);
  }
  int id(const std::string& piece, const std::string& where) const {
    const auto found = ids_.find(piece);
    if (found == ids_.end())
      throw Error(where + ": \"" + piece + "\" is not a piece of the model's " + side_ +
                  " vocabulary (a shortlist made for another model?)");
    return found->second;
  }

 private:
  std::string side_;
  std::unordered_map<std::string, int> ids_;
};

float read_probability(const std::string& text, const std::string& where) {
  if (text == kUnknownProbability) return std::numeric_limits<float>::quiet_NaN();
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value) || value < 0 ||
      value > 1)
    throw Error(where + ": \"" + text + "\" is not a probability (a number in [0, 1], or - where unknown)");
  return static_cast<float>(value);
}

void check_hash(const Shortlist::About& about, const char* key, const Tokenizer& tokenizer, const std::string& path,
                const std::string& side) {
  for (const auto& [name, value] : about)
    if (name == key) {
      if (value != vocabulary_hash(tokenizer))
        throw Error(path + " was made for another " + side + " vocabulary (its hash " + value + ", the model's " +
                    vocabulary_hash(tokenizer) + ")");
      return;
    }
  throw Error(path + ": its [about] section lacks " + key + " (the hash of the vocabulary it was made for)");
}

}  // namespace

std::string vocabulary_hash(const Tokenizer& tokenizer) {
  std::string pieces;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) pieces += tokenizer.piece(id) + '\n';
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(stable_hash(pieces)));
  return text;
}

Shortlist::Shortlist(int source_vocab, int target_vocab)
    : translations_(static_cast<size_t>(std::max(source_vocab, 0))), target_vocab_(target_vocab) {
  if (source_vocab <= 0 || target_vocab <= 0) throw Error("a shortlist needs two non-empty vocabularies");
}

void Shortlist::check_target(int target) const {
  if (target < 0 || target >= target_vocab_)
    throw Error("shortlist: target id " + std::to_string(target) + " outside the vocabulary of " +
                std::to_string(target_vocab_));
}

const std::vector<ShortlistEntry>& Shortlist::translations(int source) const {
  static const std::vector<ShortlistEntry> none;
  return source >= 0 && source < source_vocab() ? translations_[static_cast<size_t>(source)] : none;
}

void Shortlist::set_always(std::vector<ShortlistEntry> entries) {
  for (const auto& entry : entries) check_target(entry.target);
  always_ = std::move(entries);
}

void Shortlist::set_translations(int source, std::vector<ShortlistEntry> entries) {
  if (source < 0 || source >= source_vocab())
    throw Error("shortlist: source id " + std::to_string(source) + " outside the vocabulary of " +
                std::to_string(source_vocab()));
  for (const auto& entry : entries) check_target(entry.target);
  translations_[static_cast<size_t>(source)] = std::move(entries);
}

int64_t Shortlist::translated_sources() const {
  return std::count_if(translations_.begin(), translations_.end(), [](const auto& row) { return !row.empty(); });
}

int64_t Shortlist::translation_entries() const {
  int64_t entries = 0;
  for (const auto& row : translations_) entries += static_cast<int64_t>(row.size());
  return entries;
}

std::vector<int64_t> Shortlist::candidates(const std::vector<const std::vector<int>*>& sources) const {
  std::vector<uint8_t> chosen(static_cast<size_t>(target_vocab_), 0);
  for (const auto& entry : always_) chosen[static_cast<size_t>(entry.target)] = 1;
  for (const auto* sentence : sources)
    for (const int source : *sentence)
      for (const auto& entry : translations(source)) chosen[static_cast<size_t>(entry.target)] = 1;
  std::vector<int64_t> ids;
  for (size_t id = 0; id < chosen.size(); ++id)
    if (chosen[id]) ids.push_back(static_cast<int64_t>(id));
  return ids;
}

void Shortlist::write(const std::string& path, const Tokenizer& source, const Tokenizer& target,
                      const About& about) const {
  AtomicFileWriter file(path);
  write_to(file, source, target, about);
  file.commit();
}

void Shortlist::write_to(AtomicFileWriter& file, const Tokenizer& source, const Tokenizer& target,
                         const About& about) const {
  std::string text = std::string(kFirstLine) + "\n[about]\n";
  for (const auto& [key, value] : about)
    if (key != kSourceHashKey && key != kTargetHashKey) text += one_line(key) + '\t' + one_line(value) + '\n';
  text += std::string(kSourceHashKey) + '\t' + vocabulary_hash(source) + '\n';
  text += std::string(kTargetHashKey) + '\t' + vocabulary_hash(target) + '\n';
  text += "[always]\n";
  for (const auto& entry : always_) text += piece_text(target, entry.target) + '\t' + probability_text(entry.probability) + '\n';
  text += "[translations]\n";
  for (size_t s = 0; s < translations_.size(); ++s) {
    if (translations_[s].empty()) continue;
    const auto source_piece = piece_text(source, static_cast<int>(s));
    for (const auto& entry : translations_[s])
      text += source_piece + '\t' + piece_text(target, entry.target) + '\t' + probability_text(entry.probability) + '\n';
    if (text.size() > (1u << 20)) {
      file.write(text);
      text.clear();
    }
  }
  file.write(text);
}

Shortlist Shortlist::read(const std::string& path, const Tokenizer& source, const Tokenizer& target) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error("cannot open shortlist " + path);
  LineReader lines(file, path);
  std::string line;
  if (!lines.next(line) || line != kFirstLine)
    throw Error(path + ":1: not a shortlist (its first line is not \"" + kFirstLine + "\"; nmt-shortlist makes them)");
  Shortlist shortlist(source.vocab_size(), target.vocab_size());
  const PieceIds source_ids(source, "source"), target_ids(target, "target");
  std::string section;
  bool hashes_checked = false;
  std::vector<ShortlistEntry> always;
  while (lines.next(line)) {
    const std::string where = path + ":" + std::to_string(lines.number());
    if (line == "[about]" || line == "[always]" || line == "[translations]") {
      section = line;
      continue;
    }
    const auto fields = split_tabs(line);
    const size_t expected = section == "[translations]" ? 3 : 2;
    if (section.empty()) throw Error(where + ": a line before the first section ([about], [always], [translations])");
    if (fields.size() != expected)
      throw Error(where + ": " + std::to_string(expected) + " tab-separated fields expected in " + section + ", found " +
                  std::to_string(fields.size()));
    if (section == "[about]") {
      shortlist.about_.emplace_back(fields[0], fields[1]);
      continue;
    }
    if (!hashes_checked) {  // before any piece: a wrong vocabulary is named as such
      check_hash(shortlist.about_, kSourceHashKey, source, path, "source");
      check_hash(shortlist.about_, kTargetHashKey, target, path, "target");
      hashes_checked = true;
    }
    if (section == "[always]") {
      always.push_back({target_ids.id(fields[0], where), read_probability(fields[1], where)});
    } else {
      auto& row = shortlist.translations_[static_cast<size_t>(source_ids.id(fields[0], where))];
      row.push_back({target_ids.id(fields[1], where), read_probability(fields[2], where)});
    }
  }
  if (!hashes_checked) {
    check_hash(shortlist.about_, kSourceHashKey, source, path, "source");
    check_hash(shortlist.about_, kTargetHashKey, target, path, "target");
  }
  shortlist.always_ = std::move(always);
  return shortlist;
}

std::string describe(const Shortlist& shortlist) {
  auto text = std::to_string(shortlist.always().size()) + " target pieces always, translations for " +
              std::to_string(shortlist.translated_sources()) + " source pieces (" +
              std::to_string(shortlist.translation_entries()) + " entries)";
  for (const auto& [key, value] : shortlist.about())
    if (key == "corpus") text += ", made from " + value;
  return text;
}

Shortlist select_shortlist(const LexicalTranslation& table, const ShortlistSelection& selection) {
  if (selection.best < 0 || selection.frequent < 0 || !(selection.min_probability >= 0))
    throw Error("shortlist: best, frequent and the minimum probability must not be negative");
  Shortlist shortlist(table.source_vocab, table.target_vocab);
  // The most frequent targets, by their count (ties: the smaller id).
  std::vector<int> by_count;
  int64_t total = 0;
  for (int t = 0; t < table.target_vocab; ++t) {
    total += table.target_counts[static_cast<size_t>(t)];
    if (!SpecialIds::contains(t) && table.target_counts[static_cast<size_t>(t)] > 0) by_count.push_back(t);
  }
  const auto more_frequent = [&](int a, int b) {
    const auto ca = table.target_counts[static_cast<size_t>(a)], cb = table.target_counts[static_cast<size_t>(b)];
    return ca > cb || (ca == cb && a < b);
  };
  std::sort(by_count.begin(), by_count.end(), more_frequent);
  by_count.resize(std::min<size_t>(by_count.size(), static_cast<size_t>(selection.frequent)));
  std::vector<ShortlistEntry> always;
  for (const int t : by_count)
    always.push_back({t, static_cast<float>(static_cast<double>(table.target_counts[static_cast<size_t>(t)]) /
                                            static_cast<double>(std::max<int64_t>(total, 1)))});
  shortlist.set_always(std::move(always));
  for (int s = 0; s < table.source_vocab; ++s) {
    if (SpecialIds::contains(s)) continue;
    std::vector<ShortlistEntry> row;
    for (int64_t e = table.offsets[static_cast<size_t>(s)]; e < table.offsets[static_cast<size_t>(s) + 1]; ++e) {
      const auto target = table.targets[static_cast<size_t>(e)];
      const auto p = table.probabilities[static_cast<size_t>(e)];
      if (!SpecialIds::contains(target) && p >= selection.min_probability) row.push_back({target, p});
    }
    std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.probability > b.probability; });
    if (row.size() > static_cast<size_t>(selection.best)) row.resize(static_cast<size_t>(selection.best));
    shortlist.set_translations(s, std::move(row));
  }
  return shortlist;
}

}  // namespace nmt
