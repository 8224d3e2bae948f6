#pragma once
// A vocabulary shortlist (Marian's lexical shortlist, CTranslate2's vocabulary map): for
// each source piece the target pieces it is likely to translate to, plus target pieces
// any sentence may use. A decoder given one scores, for each batch, only the union of its
// candidates instead of the whole target vocabulary (decoding/vocabulary_part.h).
//
// Made from a parallel corpus's lexical translation table (lexical_translation.h) by
// select_shortlist, and kept as text that can be read and grepped: pieces, not ids, with
// the hash of each vocabulary it was made for (docs/shortlist.md has the format).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nmt {

class AtomicFileWriter;

class Tokenizer;
struct LexicalTranslation;

struct ShortlistEntry {
  int target = 0;
  float probability = 0;  ///< p(target | source); for always(): the target's share of the corpus's pieces;
                          ///< NaN where not known (written "-": Marian's binary shortlists have none)
};

class Shortlist {
 public:
  /// How it was made, as ordered key-value pairs (the file's [about] section).
  using About = std::vector<std::pair<std::string, std::string>>;

  Shortlist(int source_vocab, int target_vocab);

  /// Reads a file made for the vocabularies of `source` and `target`. nmt::Error naming the
  /// file and line for anything else: another format, a piece neither vocabulary has, a
  /// vocabulary hash that is not theirs.
  static Shortlist read(const std::string& path, const Tokenizer& source, const Tokenizer& target);
  /// Writes it whole or not at all, with `about` before the hashes of the two vocabularies.
  void write(const std::string& path, const Tokenizer& source, const Tokenizer& target, const About& about) const;
  /// The same text into `file`, not committed: a caller that writes other files with it
  /// commits it once they are written (nmt-import: the checkpoint first).
  void write_to(AtomicFileWriter& file, const Tokenizer& source, const Tokenizer& target, const About& about) const;

  /// The target ids a batch of these source sentences may produce: always() and the
  /// translations of every source id they hold, each once, increasing.
  std::vector<int64_t> candidates(const std::vector<const std::vector<int>*>& sources) const;

  const std::vector<ShortlistEntry>& always() const { return always_; }
  const std::vector<ShortlistEntry>& translations(int source) const;
  void set_always(std::vector<ShortlistEntry> entries);
  void set_translations(int source, std::vector<ShortlistEntry> entries);
  int source_vocab() const { return static_cast<int>(translations_.size()); }
  int target_vocab() const { return target_vocab_; }
  const About& about() const { return about_; }
  /// Source ids with translations, and the entries they hold in all.
  int64_t translated_sources() const;
  int64_t translation_entries() const;

 private:
  void check_target(int target) const;

  std::vector<ShortlistEntry> always_;
  std::vector<std::vector<ShortlistEntry>> translations_;  // per source id, most probable first
  int target_vocab_;
  About about_;
};

struct ShortlistSelection {
  int best = 50;                  ///< translations kept per source piece, most probable first
  double min_probability = 0.01;  ///< and only those with at least this p(t | s)
  int frequent = 100;             ///< the most frequent target pieces, always candidates
};

/// The shortlist `selection` keeps of `table` (special ids are never entries: a
/// vocabulary part always holds them).
Shortlist select_shortlist(const LexicalTranslation& table, const ShortlistSelection& selection);

/// One line on what a shortlist holds: "100 target pieces always, translations for 5473
/// source pieces (83030 entries)", and the corpus it was made from where [about] says.
std::string describe(const Shortlist& shortlist);

/// A hash of a tokenizer's pieces in id order: the same vocabulary, the same hash.
std::string vocabulary_hash(const Tokenizer& tokenizer);

}  // namespace nmt
