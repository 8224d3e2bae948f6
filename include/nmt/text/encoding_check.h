#pragma once
// A text in another encoding than UTF-8, told once from its first lines instead of a warning
// and a blank output line for each of them: UTF-16 or UTF-32 (a byte-order mark, NUL
// bytes), or an 8-bit encoding such as Latin-1 (most lines not valid UTF-8).
#include <string>

namespace nmt {

class EncodingCheck {
 public:
  /// Lines judged: the verdict on an 8-bit encoding comes after this many non-blank lines.
  static constexpr long kLinesJudged = 20;
  /// At the end of a shorter text, this many non-blank lines are enough to judge.
  static constexpr long kFewestJudged = 3;

  /// `name` names the text in errors (a path, or "stdin").
  explicit EncodingCheck(std::string name);
  /// Each line as read, in order. Throws nmt::Error naming the text, what it seems to be
  /// and the iconv command that converts it, as soon as that is clear.
  void line(const std::string& text);
  /// At the end of the text: the verdict on a text shorter than kLinesJudged lines.
  void finish();

 private:
  [[noreturn]] void refuse(const std::string& seems, const std::string& from) const;
  std::string name_;
  long lines_ = 0, judged_ = 0, invalid_ = 0;
  bool decided_ = false;
};

/// For an error on a line that is not UTF-8 (utf8_problem's `problem`) in a file where one
/// such line is already an error (corpora): how to convert the file, if that is the cause.
std::string conversion_hint(const std::string& problem, const std::string& path);

}  // namespace nmt
