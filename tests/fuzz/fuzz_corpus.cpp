// libFuzzer: the line reader and the UTF-8 check on arbitrary bytes (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "nmt/base/error.h"
#include "nmt/text/corpus.h"

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
  for (std::string line; nmt::read_line(raw, line, "input");) (void)nmt::is_blank(line);
  return 0;
}
