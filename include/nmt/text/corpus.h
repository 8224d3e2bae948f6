#pragma once
// Reading text and parallel corpora with errors that name the file and line.
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "nmt/text/token_corpus.h"

namespace nmt {

/// Empty when `text` is valid UTF-8 without NUL bytes, else a short description such as
/// "invalid UTF-8 byte 0xff at byte 17" or "NUL byte at byte 3" (a NUL is valid UTF-8 but
/// no text: it ends strings in SentencePiece and in most tools a translation goes to).
std::string utf8_problem(std::string_view text);

/// True for a line of only spaces and tabs (or nothing).
bool is_blank(const std::string& line);

/// The tab-separated fields of a line: "a\tb" -> {"a", "b"}, "" -> {} (constraint files,
/// shortlists).
std::vector<std::string> split_tabs(const std::string& line);

/// All lines of a stream (trailing "\r" dropped; line by line: nmt/text/line_reader.h). With
/// `check_utf8`, invalid UTF-8 throws nmt::Error as "name:line: ..."; without, lines are
/// returned as they are (for tools that warn per line instead). A line over
/// LineReader::kDefaultMaxBytes throws "name:line: ...".
std::vector<std::string> read_lines(std::istream& in, const std::string& name, bool check_utf8);

/// Reads a UTF-8 text file into lines (a trailing "\r" is dropped: Windows line endings).
/// Throws nmt::Error for a missing/unreadable file or invalid UTF-8 ("file:line: ...").
std::vector<std::string> read_text_lines(const std::string& path);

/// Two line-aligned files. Pairs where either side is empty (or only spaces) are skipped
/// and counted; `line_numbers` keeps the 1-based line of each kept pair.
struct ParallelCorpus {
  std::vector<std::string> source, target;
  std::vector<long> line_numbers;
  long total_lines = 0;
  long empty_skipped = 0;
};

/// Throws nmt::Error when the files differ in line count (both counts named),
/// for invalid UTF-8 (file:line) or a missing file.
ParallelCorpus read_parallel_corpus(const std::string& source_path, const std::string& target_path);

/// Sentence pairs as token ids (no bos/eos added) in memory, after length filtering.
struct EncodedCorpus final : TokenCorpus {
  std::vector<std::vector<int>> source, target;
  std::vector<long> line_numbers;
  std::vector<size_t> kept;  ///< per pair, its index in the ParallelCorpus it came from
  long too_long_skipped = 0;
  long empty_skipped = 0;

  size_t size() const override { return source.size(); }
  size_t source_length(size_t pair) const override { return source[pair].size(); }
  size_t target_length(size_t pair) const override { return target[pair].size(); }
  void read(size_t pair, std::vector<int>& source_ids, std::vector<int>& target_ids) const override {
    source_ids = source[pair];
    target_ids = target[pair];
  }
};

class Tokenizer;
/// Encodes both sides; pairs with more than `max_tokens` tokens on either side are
/// skipped and counted (0 = no limit).
EncodedCorpus encode_parallel_corpus(const ParallelCorpus& corpus, const Tokenizer& source_tokenizer,
                                     const Tokenizer& target_tokenizer, size_t max_tokens);

/// One line for the log: "read 29000 pairs from X / Y; skipped 3 empty, 12 over 100 tokens".
std::string describe(const ParallelCorpus& corpus, const EncodedCorpus& encoded,
                     const std::string& source_path, const std::string& target_path,
                     size_t max_tokens);

}  // namespace nmt
