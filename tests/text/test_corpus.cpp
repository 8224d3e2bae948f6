#include "support/catch.h"

#include "nmt/text/corpus.h"
#include "nmt/base/error.h"
#include "support/test_util.h"

using nmt::test::ScratchDir;
using nmt::test::write_text;

TEST_CASE("utf8_problem accepts valid text and pinpoints invalid bytes", "[corpus]") {
  CHECK(nmt::utf8_problem("plain ascii").empty());
  CHECK(nmt::utf8_problem("Straße über 数字 😀").empty());
  CHECK(nmt::utf8_problem("bad \xff byte") == "invalid UTF-8 byte 0xff at byte 5");
  CHECK(!nmt::utf8_problem("truncated \xc3").empty());
  CHECK(!nmt::utf8_problem("overlong \xc0\xaf").empty());
  CHECK(!nmt::utf8_problem("surrogate \xed\xa0\x80").empty());
}

TEST_CASE("read_text_lines handles CRLF and reports file:line for bad UTF-8", "[corpus]") {
  ScratchDir dir;
  write_text(dir.file("crlf.txt"), "one\r\ntwo\r\n");
  CHECK(nmt::read_text_lines(dir.file("crlf.txt")) == std::vector<std::string>{"one", "two"});

  write_text(dir.file("bad.txt"), "fine\nalso fine\nbroken \xfe here\n");
  CHECK_THROWS_WITH(nmt::read_text_lines(dir.file("bad.txt")),
                    HasSubstring("bad.txt:3: invalid UTF-8"));
  CHECK_THROWS_WITH(nmt::read_text_lines(dir.file("missing.txt")), HasSubstring("missing.txt"));
}

TEST_CASE("read_parallel_corpus skips empty pairs and rejects unequal files", "[corpus]") {
  ScratchDir dir;
  write_text(dir.file("a.src"), "eins\n\nzwei\ndrei\n");
  write_text(dir.file("a.tgt"), "one\ntwo\n  \nthree\n");
  const auto corpus = nmt::read_parallel_corpus(dir.file("a.src"), dir.file("a.tgt"));
  CHECK(corpus.source == std::vector<std::string>{"eins", "drei"});
  CHECK(corpus.target == std::vector<std::string>{"one", "three"});
  CHECK(corpus.line_numbers == std::vector<long>{1, 4});
  CHECK(corpus.empty_skipped == 2);
  CHECK(corpus.total_lines == 4);

  write_text(dir.file("short.tgt"), "one\n");
  CHECK_THROWS_WITH(nmt::read_parallel_corpus(dir.file("a.src"), dir.file("short.tgt")),
                    HasSubstring("4 lines") && HasSubstring("1"));
}
