#include "nmt/tasks/number_words.h"

#include "support/catch.h"

#include <set>
#include <stdexcept>
#include <string>

namespace {

struct Spelling {
  long value;
  const char* english;
  const char* german;
};

// Hand-checked. Covers the irregular German forms (eins/ein, sechzehn, siebzig,
// dreißig) and every place where the word order differs from English.
const Spelling kSpellings[] = {
    {0, "zero", "null"},
    {1, "one", "eins"},
    {7, "seven", "sieben"},
    {10, "ten", "zehn"},
    {11, "eleven", "elf"},
    {12, "twelve", "zwölf"},
    {13, "thirteen", "dreizehn"},
    {16, "sixteen", "sechzehn"},
    {17, "seventeen", "siebzehn"},
    {20, "twenty", "zwanzig"},
    {21, "twenty-one", "einundzwanzig"},
    {30, "thirty", "dreißig"},
    {31, "thirty-one", "einunddreißig"},
    {42, "forty-two", "zweiundvierzig"},
    {60, "sixty", "sechzig"},
    {70, "seventy", "siebzig"},
    {99, "ninety-nine", "neunundneunzig"},
    {100, "one hundred", "einhundert"},
    {101, "one hundred one", "einhunderteins"},
    {110, "one hundred ten", "einhundertzehn"},
    {121, "one hundred twenty-one", "einhunderteinundzwanzig"},
    {342, "three hundred forty-two", "dreihundertzweiundvierzig"},
    {616, "six hundred sixteen", "sechshundertsechzehn"},
    {777, "seven hundred seventy-seven", "siebenhundertsiebenundsiebzig"},
    {999, "nine hundred ninety-nine", "neunhundertneunundneunzig"},
    {1000, "one thousand", "eintausend"},
    {1001, "one thousand one", "eintausendeins"},
    {1005, "one thousand five", "eintausendfünf"},
    {2021, "two thousand twenty-one", "zweitausendeinundzwanzig"},
    {10000, "ten thousand", "zehntausend"},
    {17000, "seventeen thousand", "siebzehntausend"},
    {21000, "twenty-one thousand", "einundzwanzigtausend"},
    {100000, "one hundred thousand", "einhunderttausend"},
    {101000, "one hundred one thousand", "einhunderteintausend"},
    {999999, "nine hundred ninety-nine thousand nine hundred ninety-nine",
     "neunhundertneunundneunzigtausendneunhundertneunundneunzig"},
    {1000000, "one million", "eine Million"},
    {1000001, "one million one", "eine Million eins"},
    {2000000, "two million", "zwei Millionen"},
    {2300000, "two million three hundred thousand", "zwei Millionen dreihunderttausend"},
    {21000000, "twenty-one million", "einundzwanzig Millionen"},
    {101000000, "one hundred one million", "einhunderteine Millionen"},
    {999999999,
     "nine hundred ninety-nine million nine hundred ninety-nine thousand nine hundred "
     "ninety-nine",
     "neunhundertneunundneunzig Millionen "
     "neunhundertneunundneunzigtausendneunhundertneunundneunzig"},
};

int digit_count(long v) { return static_cast<int>(std::to_string(v).size()); }

}  // namespace

TEST_CASE("number words are spelled correctly in English and German", "[data]") {
  for (const auto& s : kSpellings) {
    INFO("value " << s.value);
    CHECK(nmt::english_number_words(s.value) == s.english);
    CHECK(nmt::german_number_words(s.value) == s.german);
  }
}

TEST_CASE("number words reject values outside the range", "[data]") {
  CHECK_THROWS_AS(nmt::english_number_words(-1), std::invalid_argument);
  CHECK_THROWS_AS(nmt::german_number_words(1'000'000'000), std::invalid_argument);
}

TEST_CASE("number splits have the requested sizes and aligned pairs", "[data]") {
  const auto s = nmt::generate_number_splits(7, 300, 40, 50, 5);
  CHECK(s.train.size() == 300);
  CHECK(s.valid.size() == 40);
  CHECK(s.test.size() == 50);
  for (const auto& p : s.train) {
    CHECK(p.english == nmt::english_number_words(p.value));
    CHECK(p.german == nmt::german_number_words(p.value));
  }
}

TEST_CASE("number splits are deterministic per seed", "[data]") {
  auto values = [](const nmt::NumberSplits& s) {
    std::vector<long> v;
    for (const auto* split : {&s.train, &s.valid, &s.test})
      for (const auto& p : *split) v.push_back(p.value);
    return v;
  };
  const auto a = values(nmt::generate_number_splits(42, 200, 20, 20));
  CHECK(a == values(nmt::generate_number_splits(42, 200, 20, 20)));
  CHECK(a != values(nmt::generate_number_splits(43, 200, 20, 20)));
}

TEST_CASE("number splits are disjoint and cover every magnitude", "[data]") {
  const int max_digits = 6;
  const auto s = nmt::generate_number_splits(1, 2000, 300, 300, max_digits);
  std::set<long> all;
  std::size_t drawn = 0;
  for (const auto* split : {&s.train, &s.valid, &s.test}) {
    std::set<int> magnitudes;
    for (const auto& p : *split) {
      all.insert(p.value);
      ++drawn;
      magnitudes.insert(digit_count(p.value));
      CHECK(digit_count(p.value) <= max_digits);
    }
    // train sees all magnitudes; valid/test see all but possibly the ten
    // 1-digit values (the pool is shuffled, so they are not starved otherwise).
    for (int d = split == &s.train ? 1 : 2; d <= max_digits; ++d) CHECK(magnitudes.count(d) == 1);
  }
  CHECK(all.size() == drawn);  // no value twice, within or across splits
}

TEST_CASE("number splits can use the whole range but not more", "[data]") {
  const auto s = nmt::generate_number_splits(3, 6, 2, 2, 1);  // all of 0..9
  std::set<long> all;
  for (const auto* split : {&s.train, &s.valid, &s.test})
    for (const auto& p : *split) all.insert(p.value);
  CHECK(all.size() == 10);
  CHECK_THROWS_AS(nmt::generate_number_splits(3, 90, 10, 1, 2), std::invalid_argument);
  CHECK_THROWS_AS(nmt::generate_number_splits(3, 1, 1, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(nmt::generate_number_splits(3, 1, 1, 1, 10), std::invalid_argument);
}
