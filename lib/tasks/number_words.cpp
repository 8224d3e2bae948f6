#include "nmt/tasks/number_words.h"

#include <cstdint>
#include <random>
#include <stdexcept>
#include <unordered_set>
#include <utility>

namespace nmt {
namespace {

constexpr long kMaxValue = 999'999'999;

void check_range(long n) {
  if (n < 0 || n > kMaxValue)
    throw std::invalid_argument("number words: " + std::to_string(n) +
                                " is outside 0..999999999");
}

// ---- English ---------------------------------------------------------------

const char* const kEnSmall[] = {"zero",    "one",     "two",       "three",    "four",
                                "five",    "six",     "seven",     "eight",    "nine",
                                "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                                "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
const char* const kEnTens[] = {"", "", "twenty", "thirty", "forty",
                               "fifty", "sixty", "seventy", "eighty", "ninety"};

// 1..999
std::string english_below_thousand(long n) {
  std::string out;
  if (n >= 100) {
    out = std::string(kEnSmall[n / 100]) + " hundred";
    n %= 100;
    if (n == 0) return out;
    out += ' ';
  }
  if (n < 20) return out + kEnSmall[n];
  out += kEnTens[n / 10];
  if (n % 10 != 0) out += std::string("-") + kEnSmall[n % 10];
  return out;
}

// ---- German ----------------------------------------------------------------

// Index 1 is the bound form "ein"; the free form "eins" is handled by callers.
const char* const kDeUnits[] = {"",     "ein",    "zwei",   "drei", "vier",
                                "fünf", "sechs",  "sieben", "acht", "neun"};
// The irregular ones: sechzehn/siebzehn drop -s/-en, zwölf and elf are unique.
const char* const kDeTeens[] = {"zehn",     "elf",      "zwölf",    "dreizehn",
                                "vierzehn", "fünfzehn", "sechzehn", "siebzehn",
                                "achtzehn", "neunzehn"};
// sechzig/siebzig drop -s/-en like the teens; dreißig is spelt with ß.
const char* const kDeTens[] = {"", "", "zwanzig", "dreißig", "vierzig",
                               "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"};

// 1..999. `last_one` is the spelling of a trailing 1 ("eins" when the number
// ends here, "ein" before "tausend", "eine" before "Million(en)").
std::string german_below_thousand(long n, const char* last_one) {
  std::string out;
  if (n >= 100) out = std::string(kDeUnits[n / 100]) + "hundert";
  n %= 100;
  if (n == 0) return out;
  if (n == 1) return out + last_one;
  if (n < 10) return out + kDeUnits[n];
  if (n < 20) return out + kDeTeens[n - 10];
  if (n % 10 != 0) out += std::string(kDeUnits[n % 10]) + "und";
  return out + kDeTens[n / 10];
}

// ---- Sampling ----------------------------------------------------------------

// Uniform in [0, bound) by rejection, so the result depends only on the
// mt19937_64 stream (fully specified by the standard), not on the library's
// uniform_int_distribution.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  for (;;) {
    const std::uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

long power_of_ten(int e) {
  long p = 1;
  while (e-- > 0) p *= 10;
  return p;
}

}  // namespace

std::string english_number_words(long n) {
  check_range(n);
  if (n == 0) return "zero";
  std::string out;
  auto append = [&out](const std::string& words) {
    if (!out.empty()) out += ' ';
    out += words;
  };
  if (n >= 1'000'000) append(english_below_thousand(n / 1'000'000) + " million");
  if (n / 1000 % 1000 != 0) append(english_below_thousand(n / 1000 % 1000) + " thousand");
  if (n % 1000 != 0) append(english_below_thousand(n % 1000));
  return out;
}

std::string german_number_words(long n) {
  check_range(n);
  if (n == 0) return "null";
  std::string out;
  if (n >= 1'000'000) {
    const long millions = n / 1'000'000;
    out = millions == 1 ? "eine Million"
                        : german_below_thousand(millions, "eine") + " Millionen";
    n %= 1'000'000;
    if (n == 0) return out;
    out += ' ';
  }
  if (n >= 1000) out += german_below_thousand(n / 1000, "ein") + "tausend";
  if (n % 1000 != 0) out += german_below_thousand(n % 1000, "eins");
  return out;
}

NumberSplits generate_number_splits(unsigned long seed, std::size_t train_size,
                                    std::size_t valid_size, std::size_t test_size,
                                    int max_digits) {
  if (max_digits < 1 || max_digits > 9)
    throw std::invalid_argument("max_digits must be in 1..9, got " +
                                std::to_string(max_digits));
  const std::size_t total = train_size + valid_size + test_size;
  const auto available = static_cast<std::size_t>(power_of_ten(max_digits));
  if (total < train_size || total > available)
    throw std::invalid_argument("cannot draw " + std::to_string(total) +
                                " distinct numbers with at most " +
                                std::to_string(max_digits) + " digits (" +
                                std::to_string(available) + " exist)");

  std::mt19937_64 rng(seed);
  std::vector<long> values;
  values.reserve(total);
  std::unordered_set<long> seen;
  seen.reserve(total);
  while (values.size() < total) {
    // A duplicate redraws the digit count too, so an exhausted magnitude
    // (there are only ten 1-digit numbers) never stalls the loop.
    const int digits = 1 + static_cast<int>(uniform_below(rng, max_digits));
    const long low = digits == 1 ? 0 : power_of_ten(digits - 1);
    const long count = power_of_ten(digits) - low;
    const long value = low + static_cast<long>(uniform_below(rng, count));
    if (seen.insert(value).second) values.push_back(value);
  }
  // Small magnitudes fill up early; shuffling the pool spreads them over all
  // three splits instead of leaving them all in train.
  for (std::size_t i = values.size(); i > 1; --i)
    std::swap(values[i - 1], values[uniform_below(rng, i)]);

  NumberSplits splits;
  auto fill = [&values](std::vector<NumberPair>& split, std::size_t begin, std::size_t size) {
    split.reserve(size);
    for (std::size_t i = begin; i < begin + size; ++i)
      split.push_back({values[i], english_number_words(values[i]),
                       german_number_words(values[i])});
  };
  fill(splits.train, 0, train_size);
  fill(splits.valid, train_size, valid_size);
  fill(splits.test, train_size + valid_size, test_size);
  return splits;
}

}  // namespace nmt
