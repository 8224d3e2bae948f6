// The prepared corpus: the same ids as encoding the text in memory, the same batches, and
// refusal of damaged, foreign and stale files.
#include "support/catch.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>

#include "nmt/base/error.h"
#include "nmt/text/batching.h"
#include "nmt/text/corpus.h"
#include "nmt/text/corpus_cache.h"
#include "nmt/text/prepared_corpus.h"
#include "nmt/text/tokenizer.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;
using nmt::test::write_text;

namespace {

struct Prepared {
  ScratchDir dir;
  Tokenizer tokenizer;
  Prepared() : tokenizer((test::make_tiny_task(dir, 300), Tokenizer::from_file(dir.file("spm.model")))) {
    // Blank pairs on either side, and a CRLF line, among the real ones.
    std::ifstream en(dir.file("train.en")), de(dir.file("train.de"));
    std::ofstream out_en(dir.file("mixed.en"), std::ios::binary), out_de(dir.file("mixed.de"), std::ios::binary);
    std::string a, b;
    for (int line = 1; std::getline(en, a) && std::getline(de, b); ++line) {
      if (line == 4) a = "  ";
      if (line == 9) b = "";
      if (line == 12) a += "\r";
      out_en << a << '\n';
      out_de << b << '\n';
    }
  }
  PrepareOptions options(const std::string& output, int threads = 1) const {
    PrepareOptions o;
    o.source_path = dir.file("mixed.en");
    o.target_path = dir.file("mixed.de");
    o.output_path = dir.file(output);
    o.source_tokenizer = o.target_tokenizer = &tokenizer;
    o.threads = threads;
    return o;
  }
};

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void flip_byte(const std::string& path, std::streamoff offset) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekg(offset);
  const char byte = static_cast<char>(file.get() ^ 0x10);
  file.seekp(offset);
  file.put(byte);
}

}  // namespace

TEST_CASE("a prepared corpus holds the ids that encoding the text in memory gives", "[prepared]") {
  Prepared p;
  const auto report = prepare_corpus(p.options("c.nmtc", 2));
  CHECK(report.info.total_lines == 300);
  CHECK(report.info.empty_skipped == 2);
  CHECK(report.first_empty_lines == std::vector<uint64_t>{4, 9});
  const auto corpus = PreparedCorpus::open(p.dir.file("c.nmtc"));
  const auto text = read_parallel_corpus(p.dir.file("mixed.en"), p.dir.file("mixed.de"));
  const auto encoded = encode_parallel_corpus(text, p.tokenizer, p.tokenizer, 0);
  REQUIRE(corpus->size() == encoded.size());
  CHECK(corpus->id_bytes() == 2);  // 60 pieces
  std::vector<int> source, target;
  for (size_t pair = 0; pair < corpus->size(); ++pair) {
    corpus->read(pair, source, target);
    REQUIRE(source == encoded.source[pair]);
    REQUIRE(target == encoded.target[pair]);
    REQUIRE(corpus->line_number(pair) == static_cast<uint64_t>(encoded.line_numbers[pair]));
  }
}

TEST_CASE("preparing on 1 and 3 threads writes the same bytes", "[prepared]") {
  Prepared p;
  prepare_corpus(p.options("one.nmtc", 1));
  prepare_corpus(p.options("three.nmtc", 3));
  CHECK(bytes_of(p.dir.file("one.nmtc")) == bytes_of(p.dir.file("three.nmtc")));
}

TEST_CASE("batches of a prepared corpus equal those of the corpus in memory", "[prepared][batching]") {
  Prepared p;
  prepare_corpus(p.options("c.nmtc"));
  const auto corpus = PreparedCorpus::open(p.dir.file("c.nmtc"));
  const auto text = read_parallel_corpus(p.dir.file("mixed.en"), p.dir.file("mixed.de"));
  for (const size_t max_length : {size_t(0), size_t(6)}) {
    // Filtered at encoding (as before) and at batch time (now): the same batches.
    const auto encoded = encode_parallel_corpus(text, p.tokenizer, p.tokenizer, max_length);
    for (const bool shuffle : {false, true}) {
      const auto in_memory = make_batches(encoded, 120, 42, shuffle);
      const auto mapped = make_batches(*corpus, 120, 42, shuffle, max_length);
      INFO("max_length " << max_length << ", shuffle " << shuffle);
      REQUIRE(in_memory.size() == mapped.size());
      CHECK(mapped.pairs() == encoded.size());
      for (size_t b = 0; b < mapped.size(); ++b) {
        const auto a = collate(encoded, in_memory.batch(b)), c = collate(*corpus, mapped.batch(b));
        REQUIRE(torch::equal(a.source, c.source));
        REQUIRE(torch::equal(a.target_output, c.target_output));
      }
    }
  }
}

// The batch plan before the counting sort (a comparison sort over vectors of indices), as
// a reference: the plan must not change, or runs would not repeat those of earlier versions.
std::vector<std::vector<size_t>> reference_batches(const EncodedCorpus& corpus, int64_t batch_tokens, uint64_t seed) {
  std::vector<size_t> order(corpus.source.size());
  std::iota(order.begin(), order.end(), 0);
  deterministic_shuffle(order, seed);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(corpus.source[a].size(), corpus.target[a].size()) <
           std::make_pair(corpus.source[b].size(), corpus.target[b].size());
  });
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  size_t longest = 0;
  for (size_t index : order) {
    const size_t length = std::max(corpus.source[index].size(), corpus.target[index].size()) + 1;
    const size_t new_longest = std::max(longest, length);
    if (!current.empty() && static_cast<int64_t>(new_longest * (current.size() + 1)) > batch_tokens) {
      batches.push_back(std::move(current));
      current.clear();
      longest = length;
    } else {
      longest = new_longest;
    }
    current.push_back(index);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  std::vector<size_t> batch_order(batches.size());
  std::iota(batch_order.begin(), batch_order.end(), 0);
  deterministic_shuffle(batch_order, seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<std::vector<size_t>> shuffled;
  for (size_t i : batch_order) shuffled.push_back(batches[i]);
  return shuffled;
}

TEST_CASE("the batch plan is the one of the comparison sort, tie order included", "[batching]") {
  EncodedCorpus corpus;
  std::mt19937 random(3);
  for (int i = 0; i < 2000; ++i) {  // few distinct lengths: many ties
    corpus.source.emplace_back(1 + random() % 12, 5);
    corpus.target.emplace_back(1 + random() % 12, 6);
  }
  auto check = [&](int64_t batch_tokens) {
    for (const uint64_t seed : {1ULL, 77ULL}) {
      const auto expected = reference_batches(corpus, batch_tokens, seed);
      const auto plan = make_batches(corpus, batch_tokens, seed, true);
      REQUIRE(plan.size() == expected.size());
      for (size_t b = 0; b < plan.size(); ++b) REQUIRE(plan.batch(b) == expected[b]);
    }
  };
  check(200);
  // Pairs so long that the counting sort's buckets would not fit: the comparison sort path.
  corpus.source.emplace_back(3000, 5);
  corpus.target.emplace_back(2999, 6);
  corpus.source.emplace_back(2, 5);
  corpus.target.emplace_back(2500, 6);
  check(4000);
}

TEST_CASE("collating a batch reads only that batch's ids", "[prepared][batching]") {
  Prepared p;
  prepare_corpus(p.options("c.nmtc"));
  const auto corpus = PreparedCorpus::open(p.dir.file("c.nmtc"));
  CHECK(corpus->id_bytes_read() == 0);  // opening checks through pread, not read()
  const auto plan = make_batches(*corpus, 120, 1, true);
  CHECK(corpus->id_bytes_read() == 0);  // planning reads lengths only
  const auto rows = plan.batch(3);
  collate(*corpus, rows);
  uint64_t expected = 0;
  for (const auto pair : rows) expected += 2 * (corpus->source_length(pair) + corpus->target_length(pair));
  CHECK(corpus->id_bytes_read() == expected);
}

TEST_CASE("damaged, truncated and foreign files are refused by name", "[prepared]") {
  Prepared p;
  prepare_corpus(p.options("c.nmtc"));
  const auto good = bytes_of(p.dir.file("c.nmtc"));
  const auto path = p.dir.file("bad.nmtc");
  write_text(path, good.substr(0, good.size() - 10));
  CHECK_THROWS_WITH(PreparedCorpus::open(path), HasSubstring("bad.nmtc is truncated"));
  for (const std::streamoff offset : {std::streamoff(200), std::streamoff(good.size() - 40), std::streamoff(40)}) {
    write_text(path, good);
    flip_byte(path, offset);
    INFO("byte " << offset);
    CHECK_THROWS_WITH(PreparedCorpus::open(path), HasSubstring("bad.nmtc is corrupted"));
  }
  write_text(path, "hello, I am a text file that is longer than a header of a prepared corpus .............."
                   "......................................................................................");
  CHECK_THROWS_WITH(PreparedCorpus::open(path), HasSubstring("bad.nmtc is not a prepared corpus"));
  CHECK_THROWS_WITH(PreparedCorpus::open(p.dir.file("missing.nmtc")), HasSubstring("missing.nmtc"));
}

TEST_CASE("a prepared corpus overwritten in place under a run is refused at the next read", "[prepared]") {
  Prepared p;
  prepare_corpus(p.options("c.nmtc"));
  const auto corpus = PreparedCorpus::open(p.dir.file("c.nmtc"));
  std::vector<int> source, target;
  corpus->read(0, source, target);
  const auto bytes = bytes_of(p.dir.file("c.nmtc"));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the clock's tick
  std::fstream(p.dir.file("c.nmtc"), std::ios::binary | std::ios::in | std::ios::out) << bytes;  // as cp does
  CHECK_THROWS_WITH(corpus->read(0, source, target),
                    HasSubstring(p.dir.file("c.nmtc") + " changed while this run read it"));
}

TEST_CASE("a prepared corpus truncated under a run ends it with an error naming it, not SIGBUS", "[prepared]") {
  Prepared p;
  prepare_corpus(p.options("c.nmtc"));
  const auto corpus = PreparedCorpus::open(p.dir.file("c.nmtc"));
  int err[2];
  REQUIRE(::pipe(err) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // only async-signal-safe calls from here: the parent has threads
    ::dup2(err[1], STDERR_FILENO);
    const int fd = ::open(p.dir.file("c.nmtc").c_str(), O_WRONLY);
    if (fd < 0 || ::ftruncate(fd, 0) != 0) ::_exit(3);
    volatile size_t length = corpus->source_length(corpus->size() - 1);  // the mapped index, now past the end
    (void)length;
    ::_exit(4);
  }
  ::close(err[1]);
  std::string said;
  char buffer[512];
  for (ssize_t n; (n = ::read(err[0], buffer, sizeof buffer)) > 0;) said.append(buffer, static_cast<size_t>(n));
  ::close(err[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  INFO(said);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK_THAT(said, HasSubstring(": error: " + p.dir.file("c.nmtc") + " was truncated while this run read it"));
}

TEST_CASE("bad input is an error naming file and line, and leaves no file behind", "[prepared]") {
  Prepared p;
  write_text(p.dir.file("bad.en"), "one\ntwo\nthr\xff" "ee\n");
  write_text(p.dir.file("bad.de"), "eins\nzwei\ndrei\n");
  auto o = p.options("out.nmtc");
  o.source_path = p.dir.file("bad.en"), o.target_path = p.dir.file("bad.de");
  CHECK_THROWS_WITH(prepare_corpus(o), HasSubstring("bad.en:3: invalid UTF-8"));
  write_text(p.dir.file("bad.en"), "one\ntwo\n");
  CHECK_THROWS_WITH(prepare_corpus(o), HasSubstring("bad.en has 2 lines but") && HasSubstring("has 3"));
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(p.dir.path()))
    if (entry.path().filename().string().rfind("out.nmtc", 0) == 0) left.push_back(entry.path().string());
  CHECK(left.empty());
}

TEST_CASE("a cached corpus is reused, and prepared again when its source changes", "[prepared]") {
  Prepared p;
  CorpusCacheRequest request;
  request.source_path = p.dir.file("mixed.en");
  request.target_path = p.dir.file("mixed.de");
  request.source_tokenizer = request.target_tokenizer = &p.tokenizer;
  request.cache_dir = p.dir.file("cache/nested");
  request.role = "train";
  std::vector<std::string> lines;
  request.log = [&](const std::string& line) { lines.push_back(line); };
  const auto first = open_cached_corpus(request);
  CHECK(first->size() == 298);
  REQUIRE(!lines.empty());
  CHECK_THAT(lines.front(), HasSubstring("not prepared yet"));
  lines.clear();
  open_cached_corpus(request);
  CHECK(lines == std::vector<std::string>{"using the prepared corpus " + cached_corpus_path(request)});
  {
    std::ofstream(p.dir.file("mixed.en"), std::ios::app) << "one more\n";
    std::ofstream(p.dir.file("mixed.de"), std::ios::app) << "noch einer\n";
  }
  lines.clear();
  CHECK(open_cached_corpus(request)->size() == 299);
  REQUIRE(!lines.empty());
  CHECK_THAT(lines.front(), HasSubstring("mixed.en changed since it was prepared"));
  // A failed preparation removes the directories it created.
  write_text(p.dir.file("mixed.de"), "too short\n");
  request.cache_dir = p.dir.file("fresh/cache");
  CHECK_THROWS_WITH(open_cached_corpus(request), HasSubstring("not line-aligned"));
  CHECK(!std::filesystem::exists(p.dir.file("fresh")));
}
