// choose_band: the next pass of the batch pool, from lengths and turn order alone.
#include "support/catch.h"

#include "nmt/serve/band_choice.h"

using namespace nmt::serve;

namespace {

// The chosen lines as (job, line) pairs, in band order.
std::vector<std::pair<size_t, size_t>> chosen(const std::vector<PoolLine>& lines, int64_t max_batch_tokens) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const size_t i : choose_band(lines, max_batch_tokens)) out.emplace_back(lines[i].job_turn, lines[i].line);
  return out;
}

}  // namespace

TEST_CASE("an empty pool has no band", "[band_choice]") { CHECK(choose_band({}, 100).empty()); }

TEST_CASE("lines of one length take turns between jobs", "[band_choice]") {
  // Two jobs of four 5-token lines; a band holds four rows of 5 tokens (4 x 5 = 20).
  std::vector<PoolLine> lines;
  for (size_t job : {0, 1})
    for (size_t line = 0; line < 4; ++line) lines.push_back({job, line, 5});
  const std::vector<std::pair<size_t, size_t>> expected = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  CHECK(chosen(lines, 20) == expected);
}

TEST_CASE("the band whose jobs come first in turn order goes, the longer list on a common prefix",
          "[band_choice]") {
  // Bands of at most 2 rows of 10 tokens: {job 1's short line, job 0's short line} and {job 0's long line}.
  const std::vector<PoolLine> lines = {{0, 0, 4}, {0, 1, 10}, {1, 0, 3}};
  const std::vector<std::pair<size_t, size_t>> both = {{1, 0}, {0, 0}};
  CHECK(chosen(lines, 8) == both);  // jobs {0, 1} before {0}: the longer list with the same first job
  // Job 0 only in the second band: it goes, though the first band is shorter.
  const std::vector<PoolLine> apart = {{1, 0, 3}, {1, 1, 3}, {0, 0, 9}};
  const std::vector<std::pair<size_t, size_t>> first_job = {{0, 0}};
  CHECK(chosen(apart, 9) == first_job);
}

TEST_CASE("a band never exceeds the token limit, except one line alone", "[band_choice]") {
  std::vector<PoolLine> lines;
  for (size_t line = 0; line < 10; ++line) lines.push_back({0, line, static_cast<int64_t>(line + 1)});
  for (int64_t limit : {1, 7, 12, 30, 1000}) {
    const auto band = choose_band(lines, limit);
    REQUIRE(!band.empty());
    int64_t longest = 0;
    for (const size_t i : band) longest = std::max(longest, lines[i].tokens);
    CHECK((band.size() == 1 || static_cast<int64_t>(band.size()) * longest <= limit));
  }
}
