// Marian's binary lexical shortlist (lex.*.s2t.bin): its bytes as marian-dev writes them (the
// checksum below was computed apart from this code, by marian-dev's formula in Python), what
// is refused, and what Marian decodes a sentence over as one of our shortlists. Marian itself
// reading our export's file: tests/apps/marian_test.sh.
#include "support/catch.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nmt/base/error.h"
#include "nmt/export/marian_shortlist.h"
#include "nmt/text/shortlist.h"

using namespace nmt;

namespace {

// Source ids 0..2, target ids 0..4: id 0 lists 1 and 4, id 1 nothing, id 2 lists 3.
MarianLexicalShortlist small_shortlist() {
  MarianLexicalShortlist shortlist;
  shortlist.first = 2;
  shortlist.best = 2;
  shortlist.offsets = {0, 2, 2, 3};
  shortlist.targets = {1, 4, 3};
  return shortlist;
}

uint64_t word(const std::string& bytes, size_t index) {
  uint64_t value = 0;
  std::memcpy(&value, bytes.data() + index * 8, 8);
  return value;
}

std::vector<int> targets(const std::vector<ShortlistEntry>& entries) {
  std::vector<int> ids;
  for (const auto& entry : entries) ids.push_back(entry.target);
  return ids;
}

}  // namespace

TEST_CASE("a Marian binary shortlist is written as marian-dev writes it, checksum included", "[marian][shortlist]") {
  const auto bytes = marian_shortlist_bytes(small_shortlist());
  REQUIRE(bytes.size() == 48 + 4 * 8 + 3 * 4);
  CHECK(word(bytes, 0) == kMarianShortlistMagic);
  // hash_combine over the words from `first` on, the last half word (targets[2]) left out.
  CHECK(word(bytes, 1) == 0xd8735262d85bf1b8ull);
  CHECK(word(bytes, 4) == 4);
  CHECK(word(bytes, 5) == 3);
  CHECK(is_marian_binary_shortlist(bytes));
  CHECK_FALSE(is_marian_binary_shortlist("und\tand\t0.5\n"));

  const auto read = read_marian_shortlist(bytes, "lex.bin", 3, 5);
  CHECK(read.first == 2);
  CHECK(read.best == 2);
  CHECK(read.offsets == small_shortlist().offsets);
  CHECK(read.targets == small_shortlist().targets);
}

TEST_CASE("a damaged or foreign Marian shortlist is refused naming the file and why", "[marian][shortlist]") {
  const auto bytes = marian_shortlist_bytes(small_shortlist());
  CHECK_THROWS_WITH(read_marian_shortlist("nmt-shortlist 1\n[about]\n", "lex.bin", 3, 5),
                    HasSubstring("lex.bin: not a Marian binary shortlist"));
  CHECK_THROWS_WITH(read_marian_shortlist(bytes.substr(0, bytes.size() - 4), "lex.bin", 3, 5),
                    HasSubstring("lex.bin: 88 bytes, but its header says 4 offsets and 3 targets"));
  auto damaged = bytes;
  damaged[6 * 8 + 8] ^= 1;  // the second offset
  CHECK_THROWS_WITH(read_marian_shortlist(damaged, "lex.bin", 3, 5), HasSubstring("lex.bin: checksum"));
  CHECK_THROWS_WITH(read_marian_shortlist(bytes, "lex.bin", 4, 5),
                    HasSubstring("lex.bin: lists for 3 source ids, the model's source vocabulary has 4"));
  CHECK_THROWS_WITH(read_marian_shortlist(bytes, "lex.bin", 3, 4),
                    HasSubstring("lex.bin: target id 4 outside the model's target vocabulary of 4"));
  auto decreasing = small_shortlist();
  decreasing.offsets = {0, 2, 1, 3};
  decreasing.targets = {1, 4, 3};
  auto written = std::string();
  CHECK_NOTHROW(written = marian_shortlist_bytes(decreasing));
  CHECK_THROWS_WITH(read_marian_shortlist(written, "lex.bin", 3, 5),
                    HasSubstring("lex.bin: the offsets of source ids 1 and 2 decrease"));
}

TEST_CASE("Marian's shortlist read in our ids: what Marian decodes a sentence over", "[marian][shortlist]") {
  // Marian's vocabulary </s> 0, <unk> 1, a 2, b 3, c 4; ours pad 0, unk 1, bos 2, eos 3, a 4, b 5, c 6.
  MarianShortlistIds ids;
  ids.our_source_id = ids.our_target_id = {3, 1, 4, 5, 6};
  ids.our_source_vocab = ids.our_target_vocab = 7;
  MarianLexicalShortlist marian;
  marian.first = 3;                 // </s>, <unk>, a
  marian.offsets = {0, 1, 1, 2, 2, 2};
  marian.targets = {3, 4};          // </s> lists b (every sentence ends with </s>); a lists c

  SECTION("two vocabulary files: the lists as they are") {
    const auto ours = shortlist_from_marian(marian, ids);
    CHECK(targets(ours.always()) == std::vector<int>{4, 5});  // a (below first), b (the list of </s>); specials left out
    CHECK(targets(ours.translations(4)) == std::vector<int>{6});
    CHECK(ours.translations(5).empty());
    CHECK(std::isnan(ours.always().front().probability));
  }
  SECTION("one vocabulary file: each source piece may also translate as itself") {
    ids.one_vocabulary = true;
    const auto ours = shortlist_from_marian(marian, ids);
    CHECK(targets(ours.translations(4)) == std::vector<int>{4, 6});
    CHECK(targets(ours.translations(5)) == std::vector<int>{5});
    CHECK(targets(ours.translations(1)).empty());  // <unk> itself is a special id, always there
  }
}

TEST_CASE("our shortlist in our Marian export's ids reads back as itself", "[marian][shortlist]") {
  Shortlist ours(7, 6);
  ours.set_always({{5, 0.5f}, {4, 0.25f}});
  ours.set_translations(4, {{5, 0.9f}, {4, 0.1f}});
  ours.set_translations(6, {{4, 1.0f}});
  const auto marian = marian_shortlist_from(ours);
  CHECK(marian.first == 4);  // our special ids
  CHECK(marian.best == 2);
  CHECK(marian.offsets == std::vector<uint64_t>{0, 0, 0, 0, 2, 4, 4, 5});
  CHECK(marian.targets == std::vector<uint32_t>{4, 5, 4, 5, 4});  // </s> (3) lists the [always] pieces

  MarianShortlistIds identity;
  identity.our_source_id = {0, 1, 2, 3, 4, 5, 6};
  identity.our_target_id = {0, 1, 2, 3, 4, 5};
  identity.our_source_vocab = 7;
  identity.our_target_vocab = 6;
  const auto back = shortlist_from_marian(read_marian_shortlist(marian_shortlist_bytes(marian), "lex.bin", 7, 6), identity);
  CHECK(targets(back.always()) == std::vector<int>{4, 5});
  CHECK(targets(back.translations(4)) == std::vector<int>{4, 5});
  CHECK(targets(back.translations(6)) == std::vector<int>{4});
  CHECK(back.translation_entries() == 3);

  // Marian refuses a file whose last source id lists nothing (every offset but the last must
  // be below the target count): it lists </s>, one of the ids below `first`.
  ours.set_translations(6, {});
  const auto last_empty = marian_shortlist_from(ours);
  CHECK(last_empty.offsets == std::vector<uint64_t>{0, 0, 0, 0, 2, 4, 4, 5});
  CHECK(last_empty.targets.back() == 3);
  CHECK(targets(shortlist_from_marian(last_empty, identity).translations(6)).empty());
}

namespace {

// Lines of a text shortlist, handed out one at a time as a file would.
std::function<bool(std::string&)> lines_of(std::vector<std::string> lines) {
  auto remaining = std::make_shared<std::vector<std::string>>(std::move(lines));
  auto next = std::make_shared<size_t>(0);
  return [remaining, next](std::string& line) {
    if (*next >= remaining->size()) return false;
    line = (*remaining)[(*next)++];
    return true;
  };
}

// Pieces "s0".."s3" and "t0".."t5" are ids 0..; anything else is id 1 (the <unk> of both sides).
uint32_t piece_id(const std::string& piece) {
  if (piece.size() == 2 && (piece[0] == 's' || piece[0] == 't') && piece[1] >= '0' && piece[1] <= '5')
    return static_cast<uint32_t>(piece[1] - '0');
  return 1;
}

}  // namespace

TEST_CASE("a Marian text shortlist keeps each source piece's most probable targets, as Marian's decoder",
          "[marian][shortlist]") {
  const auto marian = marian_shortlist_from_text(
      lines_of({"t3 s0 0.5", "t1 s0 0.25", "t4 s0 0.5", "t2 s0 0.75", "NULL s0 0.9", "t5 NULL 0.9", "",
                "t2 s2 0.1", "t2 s2 0.6", "t5 s2 0", "t4 oov 0.3", "t3 s3 0.01"}),
      "lex.s2t", 4, piece_id, piece_id, MarianShortlistCut{2, 3, 0.05f});
  CHECK(marian.first == 2);
  CHECK(marian.best == 3);
  // s0: 0.75 (t2), then the tie at 0.5 (t4 before t3, the higher id first); t1 cut; NULL skipped.
  // s1 (<unk>): the unknown piece's t4. s2: t2's last listing 0.6; t5's 0 is not above 0.05.
  // s3: 0.01, not above the threshold.
  CHECK(marian.offsets == std::vector<uint64_t>{0, 3, 4, 5, 5});
  CHECK(marian.targets == std::vector<uint32_t>{2, 3, 4, 4, 2});
  // Every source id Marian lists becomes one of ours through the same path as a binary file's.
  const auto ours = shortlist_from_marian(marian, MarianShortlistIds{{3, 10, 11, 12}, {3, 10, 11, 12, 13, 14}, 13, 15});
  CHECK(targets(ours.translations(10)) == std::vector<int>{13});
}

TEST_CASE("a line of a Marian text shortlist that is not target, source, probability is refused by number",
          "[marian][shortlist]") {
  const auto read = [](std::vector<std::string> lines) {
    return marian_shortlist_from_text(lines_of(std::move(lines)), "lex.s2t", 4, piece_id, piece_id, {});
  };
  CHECK_THROWS_WITH(read({"t1 s0 0.5", "t1 s0"}), HasSubstring("lex.s2t:2: not \"target source probability\""));
  CHECK_THROWS_WITH(read({"t1 s0 high"}), HasSubstring("lex.s2t:1: not"));
  CHECK_THROWS_WITH(read({"t1 s0 0.5 extra"}), HasSubstring("lex.s2t:1: not"));
  CHECK_THROWS_WITH(read({"t1 s0 nan"}), HasSubstring("lex.s2t:1: not"));
  CHECK_THROWS_WITH(marian_shortlist_from_text(lines_of({"t1 s5 0.5"}), "lex.s2t", 4, piece_id, piece_id, {}),
                    HasSubstring("lex.s2t:1: source id 5 outside the vocabulary of 4"));
  CHECK(read({}).targets.empty());
}
