#include "nmt/text/encoding_check.h"

#include <algorithm>

#include "nmt/base/error.h"
#include "nmt/text/corpus.h"

namespace nmt {

EncodingCheck::EncodingCheck(std::string name) : name_(std::move(name)) {}

void EncodingCheck::refuse(const std::string& seems, const std::string& from) const {
  const std::string file = name_ == "stdin" ? "" : " " + name_;
  throw Error(name_ + " is not UTF-8: it looks like " + seems + "; convert it first, e.g. iconv -f " + from +
              " -t utf-8" + file + (file.empty() ? "" : " >" + file + ".utf8"));
}

void EncodingCheck::line(const std::string& text) {
  if (decided_) return;
  ++lines_;
  if (lines_ == 1 && text.size() >= 2) {
    const auto first = static_cast<unsigned char>(text[0]), second = static_cast<unsigned char>(text[1]);
    if (first == 0xFF && second == 0xFE) refuse("UTF-16 (little-endian byte-order mark)", "utf-16");
    if (first == 0xFE && second == 0xFF) refuse("UTF-16 (big-endian byte-order mark)", "utf-16");
  }
  // ASCII in UTF-16 or UTF-32 has a NUL beside every character. (A stray NUL in a text is a
  // bad line, warned about on its own.)
  const auto nuls = static_cast<size_t>(std::count(text.begin(), text.end(), '\0'));
  if (nuls >= 2 && 4 * nuls >= text.size())
    refuse("UTF-16 or UTF-32 (NUL bytes in line " + std::to_string(lines_) + ")", "utf-16");
  if (is_blank(text)) return;
  ++judged_;
  invalid_ += !utf8_problem(text).empty();
  if (judged_ >= kLinesJudged) finish();
}

void EncodingCheck::finish() {
  if (decided_ || judged_ < kFewestJudged) return;
  decided_ = true;
  if (2 * invalid_ > judged_)
    refuse("Latin-1 or another 8-bit encoding (" + std::to_string(invalid_) + " of its first " +
               std::to_string(judged_) + " non-blank lines are not valid UTF-8)",
           "latin1");
}

std::string conversion_hint(const std::string& problem, const std::string& path) {
  const bool nul = problem.rfind("NUL", 0) == 0;
  return std::string(" (if the file is ") + (nul ? "UTF-16" : "Latin-1 or another 8-bit encoding") +
         ", convert it first: iconv -f " + (nul ? "utf-16" : "latin1") + " -t utf-8 " + path + " > " + path + ".utf8)";
}

}  // namespace nmt
