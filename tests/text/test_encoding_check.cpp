// EncodingCheck: UTF-16 and 8-bit texts refused once, with the conversion; UTF-8 with a
// few bad lines left to the per-line warnings.
#include "support/catch.h"

#include "nmt/base/error.h"
#include "nmt/text/encoding_check.h"

using namespace nmt;

TEST_CASE("a UTF-16 text is refused at its first line", "[encoding]") {
  EncodingCheck little("in.txt");
  CHECK_THROWS_WITH(little.line(std::string("\xff\xfeh\0i\0", 6)),
                    HasSubstring("in.txt is not UTF-8: it looks like UTF-16 (little-endian byte-order mark)") &&
                        HasSubstring("iconv -f utf-16 -t utf-8 in.txt > in.txt.utf8"));
  EncodingCheck big("stdin");
  CHECK_THROWS_WITH(big.line(std::string("\xfe\xff\0h\0i", 6)), HasSubstring("UTF-16 (big-endian"));
  EncodingCheck no_mark("stdin");
  no_mark.line("hello");
  CHECK_NOTHROW(no_mark.line(std::string("a\0b", 3)));  // one stray NUL: that line's own warning
  CHECK_THROWS_WITH(no_mark.line(std::string("\0h\0i", 4)), HasSubstring("NUL bytes in line 3"));
}

TEST_CASE("a text whose lines are mostly not UTF-8 is refused as 8-bit", "[encoding]") {
  EncodingCheck check("de.txt");
  for (int i = 1; i < EncodingCheck::kLinesJudged; ++i) CHECK_NOTHROW(check.line("Gr\xfc\xdf Gott"));
  CHECK_THROWS_WITH(check.line("Gr\xfc\xdf Gott"),
                    HasSubstring("Latin-1 or another 8-bit encoding (20 of its first 20 non-blank lines") &&
                        HasSubstring("iconv -f latin1 -t utf-8 de.txt"));
  EncodingCheck shorter("stdin");
  for (int i = 0; i < 3; ++i) shorter.line("Gr\xfc\xdf Gott");
  CHECK_THROWS_WITH(shorter.finish(), HasSubstring("3 of its first 3"));
}

TEST_CASE("UTF-8 with a few bad lines, blank lines and short texts pass", "[encoding]") {
  EncodingCheck check("stdin");
  for (int i = 0; i < 30; ++i) {
    CHECK_NOTHROW(check.line(i % 3 == 0 ? "bad \xff line" : "gr\xc3\xbc\xc3\x9f dich"));
    CHECK_NOTHROW(check.line(""));
  }
  CHECK_NOTHROW(check.finish());
  EncodingCheck two("stdin");  // too few lines to judge: each gets its own warning
  two.line("a \xff");
  two.line("b \xff");
  CHECK_NOTHROW(two.finish());
}
