#pragma once
// The bundled quick-start task: English number words -> German number words.
// Small enough to train in minutes, yet it needs real reordering, because German
// puts units before tens ("forty-two" -> "zweiundvierzig").
#include <cstddef>
#include <string>
#include <vector>

namespace nmt {

/// 0 <= n <= 999'999'999, else std::invalid_argument. Lower case, no "and":
/// 342 -> "three hundred forty-two", 21'000'000 -> "twenty-one million".
std::string english_number_words(long n);

/// Same range. Standard spelling; below one million a single word. Hundreds and
/// thousands always carry their count ("einhundert", "eintausend", never bare
/// "hundert"/"tausend") so every digit has a visible source word. 1 alone is
/// "eins", also at the end of a compound ("einhunderteins"), but "ein" inside
/// one ("einundzwanzig", "eintausend"). Millions are separate capitalised words:
/// "eine Million", "zwei Millionen dreihunderttausend"; a count of millions that
/// ends in 1 agrees with the feminine noun ("einhunderteine Millionen").
std::string german_number_words(long n);

struct NumberPair {
  long value;
  std::string english, german;
};

struct NumberSplits {
  std::vector<NumberPair> train, valid, test;
};

/// Draws train+valid+test distinct values: a digit count uniformly in
/// 1..max_digits (1 digit means 0..9), then a value uniformly with that many
/// digits. The pool is shuffled before it is cut into splits, so every split
/// sees every magnitude even when training exhausts the small ones. Identical on
/// every platform for a given seed. Throws std::invalid_argument when max_digits
/// is outside 1..9 or the sizes exceed the 10^max_digits available values.
NumberSplits generate_number_splits(unsigned long seed, std::size_t train_size,
                                    std::size_t valid_size, std::size_t test_size,
                                    int max_digits = 6);

}  // namespace nmt
