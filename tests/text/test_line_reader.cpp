// LineReader: every line back as std::getline gives it, over-long lines cut between
// characters or refused naming file:line, and memory bounded by the limit.
#include "support/catch.h"

#include <sstream>

#include "nmt/base/error.h"
#include "nmt/text/line_reader.h"

using nmt::LineReader;

namespace {

std::vector<std::string> all_lines(const std::string& text, size_t max_bytes = LineReader::kDefaultMaxBytes) {
  std::istringstream in(text);
  LineReader reader(in, "t.txt", max_bytes, LineReader::Overlong::cut);
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) lines.push_back(line);
  CHECK(reader.number() == static_cast<long>(lines.size()));
  return lines;
}

}  // namespace

TEST_CASE("lines come back as std::getline gives them, a trailing CR dropped", "[corpus]") {
  const std::string long_line(20000, 'x');  // over the reader's 8 KiB chunks
  CHECK(all_lines("") == std::vector<std::string>{});
  CHECK(all_lines("\n") == std::vector<std::string>{""});
  CHECK(all_lines("a\r\nb") == std::vector<std::string>{"a", "b"});
  CHECK(all_lines("a\n\n" + long_line + "\nlast\n") == std::vector<std::string>{"a", "", long_line, "last"});
  CHECK(all_lines(std::string(8191, 'y') + "\nz") == std::vector<std::string>{std::string(8191, 'y'), "z"});
  CHECK(all_lines(std::string("nul\0byte\n", 9)) == std::vector<std::string>{std::string("nul\0byte", 8)});
}

TEST_CASE("an over-long line is cut between characters and the rest counted", "[corpus]") {
  const std::string text = "ab\xC3\xA4\xC3\xB6" + std::string(30000, 'c') + "\nnext\n";  // "abäö..."
  std::istringstream in(text);
  LineReader reader(in, "t.txt", 5, LineReader::Overlong::cut);
  std::string line;
  REQUIRE(reader.next(line));
  CHECK(line == "ab\xC3\xA4");  // 5 bytes would split the "ö"
  CHECK(reader.kept() == 4);
  CHECK(reader.dropped() == 30004 - 4 + 2);
  CHECK(nmt::cut_warning(reader) == "only the first 4 of its 30006 bytes read");
  CHECK(line.capacity() < 64 * 1024);  // the dropped bytes were never held
  REQUIRE(reader.next(line));
  CHECK(line == "next");
  CHECK(reader.dropped() == 0);
  CHECK_FALSE(reader.next(line));
}

TEST_CASE("an over-long line is refused naming the file and the line", "[corpus]") {
  std::istringstream in("short\n" + std::string(100, 'x') + "\n");
  LineReader reader(in, "t.txt", 50);
  std::string line;
  REQUIRE(reader.next(line));
  CHECK_THROWS_WITH(reader.next(line), "t.txt:2: a line of 100 bytes, more than the 50 a line may hold");
}
