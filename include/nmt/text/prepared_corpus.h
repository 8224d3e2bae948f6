#pragma once
// A prepared corpus: both sides of a parallel corpus tokenized once into one binary file
// that training reads in place, whatever its size (docs/prepared-corpus.md has the layout).
//
//  - Header: what it was made from (the sources' paths, sizes and modification times,
//    the tokenizers' CRC-32s) and a CRC-32 of every section, checked at open: a
//    truncated, bit-flipped or foreign file is refused with its name.
//  - Index: per pair, each side's length (uint16), the offset of its ids and the source
//    line it came from; memory-mapped (the lengths are all batch planning reads).
//  - Ids: both sides of each pair, in the narrowest type that holds both vocabularies
//    (uint16 up to 65,536 pieces); read with pread per batch, so a process's resident
//    memory does not grow with the corpus, and processes on one host share the pages.
//  - Changed under a run: what was checked at open is what is read. read() refuses a file
//    whose size or times changed since (overwritten in place); a truncation that reaches
//    the mapped index first is an error naming the file and exit 1, not a SIGBUS death.
//
// Pairs where either side is blank are not stored (counted); neither are pairs with over
// kMaxPreparedTokens ids on a side (counted). train.max_length applies at batch time, so
// one prepared corpus serves runs with different limits.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nmt/text/token_corpus.h"

namespace nmt {

class Tokenizer;

/// The most ids a side of a stored pair may have (the lengths are uint16).
constexpr size_t kMaxPreparedTokens = 65535;

/// A source file as it was when prepared.
struct PreparedSource {
  std::string path;  ///< absolute
  uint64_t bytes = 0;
  int64_t modified_ns = 0;
};

/// What a prepared corpus was made from, and what preparing skipped.
struct PreparedCorpusInfo {
  PreparedSource source, target;
  uint32_t source_tokenizer_crc = 0, target_tokenizer_crc = 0;
  uint64_t total_lines = 0;       ///< lines in each source file
  uint64_t pairs = 0;             ///< stored pairs
  uint64_t empty_skipped = 0;     ///< pairs with a blank side
  uint64_t too_long_skipped = 0;  ///< pairs with over kMaxPreparedTokens ids (or 1 MiB) on a side
};

class PreparedCorpus final : public TokenCorpus {
 public:
  /// Opens and verifies `path` (every section's checksum). Throws nmt::Error naming the
  /// file: missing, not a prepared corpus, another format version, truncated, corrupted.
  static std::shared_ptr<const PreparedCorpus> open(const std::string& path);
  ~PreparedCorpus() override;

  size_t size() const override { return pairs_; }
  size_t source_length(size_t pair) const override { return source_lengths_[pair]; }
  size_t target_length(size_t pair) const override { return target_lengths_[pair]; }
  /// Throws nmt::Error naming the file when it changed since open() checked it.
  void read(size_t pair, std::vector<int>& source, std::vector<int>& target) const override;

  const PreparedCorpusInfo& info() const { return info_; }
  const std::string& path() const { return path_; }
  /// The source line (1-based) of a stored pair.
  uint64_t line_number(size_t pair) const { return line_numbers_[pair]; }
  /// CRC-32 of all ids: equal ids in equal order on every rank.
  uint32_t ids_checksum() const { return ids_crc_; }
  /// Bytes of ids read so far through read(): what a rank's batches cost it.
  uint64_t id_bytes_read() const { return id_bytes_read_.load(); }
  int id_bytes() const { return id_bytes_; }

  /// What tells the open file from one written since: its size and times.
  struct FileState {
    uint64_t bytes = 0;
    int64_t modified_ns = 0, changed_ns = 0;
    bool operator==(const FileState& other) const {
      return bytes == other.bytes && modified_ns == other.modified_ns && changed_ns == other.changed_ns;
    }
  };

 private:
  PreparedCorpus() = default;
  /// Throws nmt::Error when the open file is no longer the one checked (size, times).
  void require_unchanged() const;

  std::string path_;
  FileState opened_;  ///< as open() found and checked it
  PreparedCorpusInfo info_;
  int fd_ = -1;
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  size_t pairs_ = 0;
  int id_bytes_ = 2;
  uint64_t ids_offset_ = 0, ids_ = 0;
  uint32_t ids_crc_ = 0;
  const uint16_t* source_lengths_ = nullptr;
  const uint16_t* target_lengths_ = nullptr;
  const uint64_t* id_offsets_ = nullptr;  ///< in ids, from the start of the ids section
  const uint64_t* line_numbers_ = nullptr;
  mutable std::atomic<uint64_t> id_bytes_read_{0};
};

struct PrepareOptions {
  std::string source_path, target_path;
  std::string output_path;
  const Tokenizer* source_tokenizer = nullptr;
  const Tokenizer* target_tokenizer = nullptr;
  int threads = 1;
  /// Progress lines ("lines, lines/s, ETA") and the summary; none when empty.
  std::function<void(const std::string&)> log;
  /// Seconds between progress lines.
  double progress_every_seconds = 10;
};

struct PrepareReport {
  PreparedCorpusInfo info;
  std::vector<uint64_t> first_empty_lines, first_too_long_lines;  ///< up to 5 each
  double seconds = 0;
};

/// Reads both files in a stream, tokenizes them on `threads` threads and writes the
/// prepared corpus atomically (temporary + fsync + rename): memory stays flat whatever the
/// corpus size, and a failure (invalid UTF-8 as "file:line: ...", files of different line
/// counts, a full disk) leaves no file behind. Throws nmt::Error.
PrepareReport prepare_corpus(const PrepareOptions& options);

/// The recorded state of a source file now (absolute path, size, mtime). Throws
/// nmt::Error when it cannot be read.
PreparedSource describe_source(const std::string& path);

/// Why `info` does not describe a corpus made from these files with these tokenizers
/// ("train.de changed since it was prepared (size 123 -> 456)"), or "" when it does.
std::string mismatch_reason(const PreparedCorpusInfo& info, const PreparedSource& source,
                            const PreparedSource& target, const Tokenizer& source_tokenizer,
                            const Tokenizer& target_tokenizer);
/// Why a source recorded as `then` is not the file `now` describes, or "" when it is.
std::string source_change(const PreparedSource& then, const PreparedSource& now);
/// Only the tokenizers (a prepared file given directly, whose sources may be gone).
std::string tokenizer_mismatch_reason(const PreparedCorpusInfo& info, const Tokenizer& source_tokenizer,
                                      const Tokenizer& target_tokenizer);

/// One line for the log: "2030000 lines -> 2030000 pairs (skipped 3 empty: lines 4, 9,
/// 12; 0 over 65535 tokens) in 41.2 s".
std::string describe(const PrepareReport& report);

}  // namespace nmt
