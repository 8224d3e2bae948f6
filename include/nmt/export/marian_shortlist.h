#pragma once
// Marian's lexical shortlist in its binary form (`lex.*.s2t.bin`, as Firefox Translations'
// models ship it; marian-dev's src/data/shortlist.h, BinaryShortlistGenerator), read and
// written here because Marian ships no library for it. All integers little-endian:
//   u64 magic 0xF11A48D5013417F5, u64 checksum,
//   u64 first, u64 best, u64 offset count (source vocabulary + 1), u64 target count,
//   the offsets (u64 each), then the targets (u32 Marian word ids)
// Source id s lists targets[offsets[s], offsets[s+1]), increasing. The checksum is Marian's
// util::hashMem over the u64 words from `first` to the end (boost's hash_combine with
// std::hash<uint64_t>, the identity on 64-bit platforms), a trailing half word left out.
//
// What Marian decodes a batch over (BinaryShortlistGenerator::generate): the target ids
// [0, first), the lists of every source id in the batch (its </s> included), each source id
// itself where one vocabulary file serves both sides, then the lowest ids not yet chosen
// until the count is a multiple of 8 (for intgemm's tiles).
//
// Marian's ids are not ours (its vocabularies have </s> at 0 and no <pad> or <s>), so a file
// becomes one of our shortlists through the import's id maps, and ours becomes one in the ids
// of our Marian export (our SentencePiece models, read by Marian with our ids).
// Torch-free.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace nmt {

class Shortlist;

/// Marian's BINARY_SHORTLIST_MAGIC: no text file starts with these bytes.
constexpr uint64_t kMarianShortlistMagic = 0xF11A48D5013417F5ull;

struct MarianLexicalShortlist {
  uint64_t first = 0;              ///< target ids [0, first) are candidates for every sentence (firstNum)
  uint64_t best = 0;               ///< the most targets a source id lists (bestNum; how it was made)
  std::vector<uint64_t> offsets;   ///< per source id, where its targets start; then the end
  std::vector<uint32_t> targets;   ///< each source id's targets, increasing

  int64_t source_vocab() const { return offsets.empty() ? 0 : static_cast<int64_t>(offsets.size()) - 1; }
};

/// Whether `bytes` start with Marian's shortlist magic (a binary shortlist, not a text one).
bool is_marian_binary_shortlist(std::string_view bytes);

/// The shortlist held in `bytes` (named `file_name` in errors), for Marian vocabularies of
/// `source_vocab` and `target_vocab` ids. Throws nmt::Error naming the file: no magic, a size
/// other than the header says, a checksum that differs, offsets for another source vocabulary,
/// offsets that decrease or run past the targets, a target id outside the target vocabulary.
MarianLexicalShortlist read_marian_shortlist(std::string_view bytes, const std::string& file_name,
                                             int64_t source_vocab, int64_t target_vocab);

/// How Marian cuts a text shortlist: its `--shortlist FILE first best threshold` (100 100 0
/// when not given).
struct MarianShortlistCut {
  uint64_t first = 100;  ///< target ids [0, first) are candidates for every sentence
  uint64_t best = 100;   ///< the most targets kept per source piece
  float threshold = 0;   ///< only probabilities above it are kept
};

/// Marian's id of a piece of one side's vocabulary (its <unk> for a piece it lacks).
using MarianPieceIds = std::function<uint32_t(const std::string& piece)>;

/// A text lexical shortlist (`lex.s2t`, or gzipped: lines "target source probability", the
/// lexical table fast_align's extract_lex writes) as Marian's decoder reads one
/// (marian-dev's LexicalShortlistGenerator): a line naming NULL is skipped, a pair listed
/// again takes its last probability, and each source id keeps its `cut.best` targets of
/// highest probability above `cut.threshold` (ties: the higher target id first, as Marian's
/// sort), sorted by id. `next_line` gives the lines one at a time (false at the end).
/// Throws nmt::Error naming `file_name` and the line for a line that is not
/// "piece piece probability", or a source id outside `source_vocab`.
MarianLexicalShortlist marian_shortlist_from_text(const std::function<bool(std::string&)>& next_line,
                                                  const std::string& file_name, int64_t source_vocab,
                                                  const MarianPieceIds& source_id, const MarianPieceIds& target_id,
                                                  const MarianShortlistCut& cut);

/// The file's bytes, checksum included.
std::string marian_shortlist_bytes(const MarianLexicalShortlist& shortlist);

/// Marian's checksum of a file's bytes (the header's second word is left out, as it holds it).
uint64_t marian_shortlist_checksum(std::string_view bytes);

/// How Marian's ids are ours, for reading its shortlist as one of ours.
struct MarianShortlistIds {
  std::vector<int> our_source_id;  ///< per Marian source id
  std::vector<int> our_target_id;  ///< per Marian target id
  int our_source_vocab = 0;
  int our_target_vocab = 0;
  bool one_vocabulary = false;     ///< one vocabulary file for both sides: Marian adds each source id itself
};

/// What Marian decodes a sentence over, as our shortlist: [always] the ids below `first` and
/// the list of </s> (every sentence ends with it), [translations] each source piece's list
/// and, with one vocabulary, the piece itself. Special ids are left out (a vocabulary part
/// always holds them); probabilities are unknown (NaN: the file has none). Marian's padding
/// to a multiple of 8 depends on the batch and is not kept.
Shortlist shortlist_from_marian(const MarianLexicalShortlist& marian, const MarianShortlistIds& ids);

/// `shortlist` in the ids of our Marian export, where Marian decodes a sentence over what our
/// vocabulary part holds: first = 4 (our special ids), the [always] pieces as the list of
/// </s>, each source piece's translations as its list (the last source id, if it has none,
/// lists </s>, which changes nothing: Marian's check refuses a file whose last list is empty).
/// Marian adds, where one vocabulary serves both sides, each source piece itself, and pads to
/// a multiple of 8.
MarianLexicalShortlist marian_shortlist_from(const Shortlist& shortlist);

}  // namespace nmt
