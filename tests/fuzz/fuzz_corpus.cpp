// libFuzzer: the line reader and the UTF-8 check on arbitrary bytes (scripts/fuzz.sh). The
// reader, with a small limit, must return every line, none over the limit, and cut valid
// UTF-8 only between characters.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "nmt/base/error.h"
#include "nmt/text/corpus.h"
#include "nmt/text/line_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto problem = nmt::utf8_problem(bytes);
  std::istringstream in(bytes);
  try {
    const auto lines = nmt::read_lines(in, "<fuzz>", true);
    // Accepted input has no invalid UTF-8 in any line.
    for (const auto& line : lines)
      if (!nmt::utf8_problem(line).empty()) __builtin_trap();
  } catch (const nmt::Error&) {
    if (problem.empty()) __builtin_trap();  // refused although the whole input is valid UTF-8
  }
  std::istringstream raw(bytes);
  nmt::LineReader cut(raw, "input", 7, nmt::LineReader::Overlong::cut);
  size_t newlines = 0, seen = 0;
  for (char c : bytes) newlines += c == '\n';
  for (std::string line; cut.next(line);) {
    ++seen;
    if (line.size() > 7 || line.size() != cut.kept()) __builtin_trap();
    if (problem.empty() && !nmt::utf8_problem(line).empty()) __builtin_trap();
    (void)nmt::is_blank(line);
  }
  const bool unterminated = !bytes.empty() && bytes.back() != '\n';
  if (seen != newlines + unterminated || cut.number() != static_cast<long>(seen)) __builtin_trap();
  return 0;
}
