#pragma once
// Two line-aligned text files read in step, one pair of lines at a time: memory is one pair
// whatever the files' size (corpus preparation, the shortlist's passes over text). A line
// over LineReader::kDefaultMaxBytes is cut, and the pair says so. Files that differ in line
// count are an nmt::Error naming both files and both counts, the longer one read to its end
// to count it.
#include <cstdint>
#include <fstream>
#include <string>

#include "nmt/base/error.h"
#include "nmt/text/line_reader.h"

namespace nmt {

/// How messages name a pair of line-aligned files: "train.de / train.en".
inline std::string parallel_files_name(const std::string& source_path, const std::string& target_path) {
  return source_path + " / " + target_path;
}

/// "parallel corpus is not line-aligned: A has N lines but B has M": the one wording, for
/// the readers that stream and the one that reads whole files.
Error misaligned_corpus_error(const std::string& source_path, uint64_t source_lines, const std::string& target_path,
                              uint64_t target_lines);

class ParallelLines {
 public:
  ParallelLines(std::string source_path, std::string target_path);
  ParallelLines(const ParallelLines&) = delete;  // the line readers refer to the streams

  /// The next pair of lines; false at the end of both files.
  bool next(std::string& source, std::string& target);
  /// Pairs read so far (the 1-based line number of the last one).
  uint64_t lines() const { return lines_; }
  /// Whether a line of the last pair was cut at the byte limit.
  bool cut() const { return source_lines_.dropped() > 0 || target_lines_.dropped() > 0; }
  /// How far through the source file of `source_bytes`, for an estimate of the time left.
  double fraction(uint64_t source_bytes);

 private:
  std::string source_path_, target_path_;
  std::ifstream source_, target_;
  LineReader source_lines_, target_lines_;
  uint64_t lines_ = 0;
};

}  // namespace nmt
