#pragma once
// Reading text line by line with memory bounded whatever a line's length: a line is kept up
// to a byte limit and the rest is read and dropped (or refused), never held. Errors name
// the file and the line.
#include <cstddef>
#include <iosfwd>
#include <string>

namespace nmt {

class LineReader {
 public:
  /// What a reader does with a line longer than its limit.
  enum class Overlong {
    refuse,  ///< next() throws nmt::Error "name:line: ..." (for text whose every byte counts)
    cut,     ///< next() keeps the first max_bytes (at a character boundary); dropped() says how many are gone
  };
  /// The default limit: far beyond any sentence, small enough to hold a few thousand.
  static constexpr size_t kDefaultMaxBytes = size_t{1} << 20;

  LineReader(std::istream& in, std::string name, size_t max_bytes = kDefaultMaxBytes, Overlong overlong = Overlong::refuse);

  /// The next line without its "\n" (and a trailing "\r": Windows line endings). False at
  /// the end; a read error (stdin a directory, an I/O error) throws nmt::Error "cannot read
  /// NAME: REASON" instead of looking like the end.
  bool next(std::string& line);
  /// 1-based number of the line next() returned last (0 before the first).
  long number() const { return number_; }
  /// Bytes of that line beyond the limit that were dropped (Overlong::cut; 0 otherwise).
  size_t dropped() const { return dropped_; }
  /// Bytes of that line returned.
  size_t kept() const { return kept_; }
  size_t max_bytes() const { return max_bytes_; }
  const std::string& name() const { return name_; }

 private:
  std::istream& in_;
  std::string name_;
  size_t max_bytes_;
  Overlong overlong_;
  long number_ = 0;
  size_t dropped_ = 0;
  size_t kept_ = 0;
};

/// For the line `reader` returned last, cut: "only the first M of its N bytes read".
std::string cut_warning(const LineReader& reader);

}  // namespace nmt
