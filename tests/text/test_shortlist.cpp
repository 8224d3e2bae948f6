// Vocabulary shortlists: IBM Model 1 finds which target piece a source piece translates
// to; the file round-trips and refuses what it was not made for, naming file and line.
#include "support/catch.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "nmt/base/error.h"
#include "nmt/text/lexical_translation.h"
#include "nmt/text/prepared_corpus.h"
#include "nmt/text/shortlist.h"
#include "nmt/text/tokenizer.h"
#include "support/test_util.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

// 18 sentence pairs in which "der" is always "the" and "ein" always "a", each beside
// every noun and verb: only the article is explained by one piece on the other side.
void write_article_corpus(const ScratchDir& dir) {
  std::string de, en;
  const char* articles[][2] = {{"der", "the"}, {"ein", "a"}};
  const char* nouns[][2] = {{"hund", "dog"}, {"katze", "cat"}, {"vogel", "bird"}};
  const char* verbs[][2] = {{"laeuft", "runs"}, {"schlaeft", "sleeps"}, {"singt", "sings"}};
  for (const auto& a : articles)
    for (const auto& n : nouns)
      for (const auto& v : verbs) {
        de += std::string(a[0]) + " " + n[0] + " " + v[0] + "\n";
        en += std::string(a[1]) + " " + n[1] + " " + v[1] + "\n";
      }
  test::write_text(dir.file("train.de"), de);
  test::write_text(dir.file("train.en"), en);
  TokenizerTrainOptions spm;
  spm.inputs = {dir.file("train.de"), dir.file("train.en")};
  spm.model_prefix = dir.file("spm");
  spm.vocab_size = 60;
  train_tokenizer(spm);
}

int piece_id(const Tokenizer& tokenizer, const std::string& piece) {
  for (int id = 0; id < tokenizer.vocab_size(); ++id)
    if (tokenizer.piece(id) == piece) return id;
  FAIL("no piece " << piece);
  return -1;
}

LexicalTranslation estimate(const ScratchDir& dir, const Tokenizer& tokenizer, int iterations = 5) {
  LexicalTranslationOptions options;
  options.source_path = dir.file("train.de");
  options.target_path = dir.file("train.en");
  options.source_tokenizer = options.target_tokenizer = &tokenizer;
  options.iterations = iterations;
  return estimate_lexical_translation(options);
}

// The most probable target of `source` in the table.
int best_target(const LexicalTranslation& table, int source) {
  const auto first = table.offsets[static_cast<size_t>(source)], last = table.offsets[static_cast<size_t>(source) + 1];
  REQUIRE(last > first);
  const auto best = std::max_element(table.probabilities.begin() + first, table.probabilities.begin() + last);
  return table.targets[static_cast<size_t>(best - table.probabilities.begin())];
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("IBM Model 1 learns which target piece each source piece translates to", "[shortlist]") {
  ScratchDir dir;
  write_article_corpus(dir);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  const auto table = estimate(dir, tokenizer);
  CHECK(table.pairs == 18);
  REQUIRE(table.offsets.size() == static_cast<size_t>(tokenizer.vocab_size()) + 1);
  CHECK(best_target(table, piece_id(tokenizer, "▁der")) == piece_id(tokenizer, "▁the"));
  CHECK(best_target(table, piece_id(tokenizer, "▁ein")) == piece_id(tokenizer, "▁a"));
  // A distribution per source piece that met any target.
  for (size_t s = 0; s + 1 < table.offsets.size(); ++s) {
    if (table.offsets[s] == table.offsets[s + 1]) continue;
    const double sum = std::accumulate(table.probabilities.begin() + table.offsets[s],
                                       table.probabilities.begin() + table.offsets[s + 1], 0.0);
    CHECK(sum == Approx(1.0).margin(1e-4));
  }
  // EM sharpens what co-occurrence alone leaves flat: "der" meets "the" and each noun's
  // pieces equally often, but "the" explains it.
  const int der = piece_id(tokenizer, "▁der");
  const auto once = estimate(dir, tokenizer, 1), five = table;
  auto p_the = [&](const LexicalTranslation& t) {
    const auto first = t.targets.begin() + t.offsets[der], last = t.targets.begin() + t.offsets[der + 1];
    return t.probabilities[static_cast<size_t>(std::lower_bound(first, last, piece_id(tokenizer, "▁the")) - t.targets.begin())];
  };
  CHECK(p_the(five) > p_the(once));
  CHECK(p_the(five) > 0.5f);
}

TEST_CASE("a prepared corpus gives the table its text gives, and one made with other tokenizers is refused",
          "[shortlist]") {
  ScratchDir dir;
  write_article_corpus(dir);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  PrepareOptions prepare;
  prepare.source_path = dir.file("train.de");
  prepare.target_path = dir.file("train.en");
  prepare.output_path = dir.file("corpus.nmtc");
  prepare.source_tokenizer = prepare.target_tokenizer = &tokenizer;
  prepare_corpus(prepare);
  const auto from_text = estimate(dir, tokenizer);
  LexicalTranslationOptions options;
  options.prepared_path = dir.file("corpus.nmtc");
  options.source_tokenizer = options.target_tokenizer = &tokenizer;
  std::vector<std::string> lines;
  options.log = [&lines](const std::string& line) { lines.push_back(line); };
  const auto from_prepared = estimate_lexical_translation(options);
  CHECK(from_prepared.pairs == from_text.pairs);
  CHECK(from_prepared.offsets == from_text.offsets);
  CHECK(from_prepared.targets == from_text.targets);
  CHECK(from_prepared.probabilities == from_text.probabilities);
  CHECK(from_prepared.target_counts == from_text.target_counts);
  REQUIRE(lines.size() == 6);  // the pass that finds the pairs, then one per iteration
  CHECK(lines.back().rfind("IBM Model 1, pass 5 of 5: 18 sentence pairs in ", 0) == 0);

  ScratchDir elsewhere;
  test::make_tiny_task(elsewhere, 50);
  const auto other = Tokenizer::from_file(elsewhere.file("spm.model"));
  options.source_tokenizer = &other;
  CHECK_THROWS_WITH(estimate_lexical_translation(options), HasSubstring(dir.file("corpus.nmtc") + ": "));
}

TEST_CASE("a corpus whose sides differ in length is refused naming both files and their line counts", "[shortlist]") {
  ScratchDir dir;
  write_article_corpus(dir);
  test::write_text(dir.file("train.en"), "the dog runs\n");
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  CHECK_THROWS_WITH(estimate(dir, tokenizer), HasSubstring("not line-aligned: " + dir.file("train.de") + " has 18 lines but " +
                                                           dir.file("train.en") + " has 1"));
}

TEST_CASE("a shortlist keeps the best translations and the most frequent targets, never a special id", "[shortlist]") {
  ScratchDir dir;
  write_article_corpus(dir);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  const auto table = estimate(dir, tokenizer);
  ShortlistSelection selection;
  selection.best = 2;
  selection.min_probability = 0.05;
  selection.frequent = 3;
  const auto shortlist = select_shortlist(table, selection);
  REQUIRE(shortlist.always().size() == 3);
  for (size_t i = 1; i < shortlist.always().size(); ++i)
    CHECK(shortlist.always()[i - 1].probability >= shortlist.always()[i].probability);
  for (int s = 0; s < shortlist.source_vocab(); ++s) {
    const auto& row = shortlist.translations(s);
    CHECK(row.size() <= 2);
    for (const auto& entry : row) {
      CHECK(entry.probability >= 0.05f);
      CHECK(entry.target > SpecialIds::kEos);
    }
    if (s <= SpecialIds::kEos) CHECK(row.empty());
  }
  CHECK(shortlist.translations(piece_id(tokenizer, "▁der")).front().target == piece_id(tokenizer, "▁the"));
  // A batch's candidates: the frequent ones and its pieces' translations, each once, increasing.
  const std::vector<int> sentence = tokenizer.encode("der hund");
  const auto candidates = shortlist.candidates({&sentence});
  CHECK(std::is_sorted(candidates.begin(), candidates.end()));
  CHECK(std::adjacent_find(candidates.begin(), candidates.end()) == candidates.end());
  auto has = [&](int id) { return std::binary_search(candidates.begin(), candidates.end(), int64_t{id}); };
  for (const auto& entry : shortlist.always()) CHECK(has(entry.target));
  for (const int source : sentence)
    for (const auto& entry : shortlist.translations(source)) CHECK(has(entry.target));
  size_t expected = shortlist.always().size();
  for (const int source : sentence) expected += shortlist.translations(source).size();
  CHECK(candidates.size() <= expected);
}

TEST_CASE("a shortlist file reads back as written, and refuses another vocabulary or a bad line by file and line",
          "[shortlist]") {
  ScratchDir dir;
  write_article_corpus(dir);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  const auto shortlist = select_shortlist(estimate(dir, tokenizer), ShortlistSelection{});
  const auto path = dir.file("shortlist.tsv");
  shortlist.write(path, tokenizer, tokenizer, {{"made_by", "a test\twith a tab"}});
  const auto read = Shortlist::read(path, tokenizer, tokenizer);
  REQUIRE(read.always().size() == shortlist.always().size());
  for (size_t i = 0; i < read.always().size(); ++i) {
    CHECK(read.always()[i].target == shortlist.always()[i].target);
    CHECK(read.always()[i].probability == Approx(shortlist.always()[i].probability).epsilon(1e-5));
  }
  for (int s = 0; s < shortlist.source_vocab(); ++s) {
    REQUIRE(read.translations(s).size() == shortlist.translations(s).size());
    for (size_t i = 0; i < read.translations(s).size(); ++i)
      CHECK(read.translations(s)[i].target == shortlist.translations(s)[i].target);
  }
  CHECK(read.about().front() == std::make_pair(std::string("made_by"), std::string("a test with a tab")));
  const auto text = read_all(path);
  CHECK(text.find("▁der\t▁the\t") != std::string::npos);  // pieces, readable and greppable

  SECTION("another vocabulary") {
    test::make_tiny_task(dir, 50);
    const auto other = Tokenizer::from_file(dir.file("spm.model"));
    CHECK_THROWS_WITH(Shortlist::read(path, other, other), HasSubstring(path + " was made for another source vocabulary"));
  }
  SECTION("a line with a field missing") {
    const auto at = text.find("▁der\t▁the\t");
    const auto line = std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1;
    auto broken = text;
    broken.replace(at, std::string("▁der\t▁the\t").size(), "▁der\t");
    test::write_text(path, broken);
    CHECK_THROWS_WITH(Shortlist::read(path, tokenizer, tokenizer),
                      HasSubstring(path + ":" + std::to_string(line) + ": 3 tab-separated fields expected"));
  }
  SECTION("a piece the vocabulary lacks, a probability that is none") {
    test::write_text(path, text + "▁nicht-da\t▁the\t0.5\n");
    CHECK_THROWS_WITH(Shortlist::read(path, tokenizer, tokenizer), HasSubstring("\"▁nicht-da\" is not a piece"));
    test::write_text(path, text + "▁der\t▁the\t1.5\n");
    CHECK_THROWS_WITH(Shortlist::read(path, tokenizer, tokenizer), HasSubstring("\"1.5\" is not a probability"));
  }
  SECTION("a probability not known (a shortlist read from Marian's binary form) is written and read as -") {
    auto unknown = shortlist;
    const auto der = piece_id(tokenizer, "▁der"), the = piece_id(tokenizer, "▁the");
    unknown.set_translations(der, {{the, std::nanf("")}});
    unknown.write(path, tokenizer, tokenizer, {});
    CHECK(read_all(path).find("▁der\t▁the\t-\n") != std::string::npos);
    const auto back = Shortlist::read(path, tokenizer, tokenizer);
    REQUIRE(back.translations(der).size() == 1);
    CHECK(back.translations(der).front().target == the);
    CHECK(std::isnan(back.translations(der).front().probability));
  }
  SECTION("not a shortlist") {
    test::write_text(path, "▁der ▁the 0.9\n");
    CHECK_THROWS_WITH(Shortlist::read(path, tokenizer, tokenizer), HasSubstring(path + ":1: not a shortlist"));
  }
}
