// Hand-checked BLEU / chrF values. There is no sacreBLEU to compare against on
// the build machines, so each expected number is derived in the comments from
// the n-gram counts and sacreBLEU 2.x's formulas.
#include "support/catch.h"

#include <cmath>
#include <stdexcept>

#include "nmt/base/error.h"
#include "nmt/eval/metrics.h"

using nmt::corpus_bleu;
using nmt::corpus_chrf;
using nmt::tokenize_13a;

TEST_CASE("13a tokenizer pads punctuation like mteval-v13a", "[metrics]") {
  CHECK(tokenize_13a("Hello, world!") == "Hello , world !");
  CHECK(tokenize_13a("end.") == "end .");
  CHECK(tokenize_13a("(test) a/b x@y.com") == "( test ) a / b x @ y . com");
  CHECK(tokenize_13a("don't well-known") == "don't well-known");  // ' and - stay
  CHECK(tokenize_13a("  many   spaces\there  ") == "many spaces here");
  CHECK(tokenize_13a("") == "");
}

TEST_CASE("13a tokenizer keeps periods and commas between digits", "[metrics]") {
  CHECK(tokenize_13a("3.14") == "3.14");
  CHECK(tokenize_13a("1,000,000 people") == "1,000,000 people");
  CHECK(tokenize_13a("$5.00") == "$ 5.00");
  // A digit on only one side: "5." is followed by a space (non-digit), ".5"
  // is preceded by one, so both get split.
  CHECK(tokenize_13a("It costs 5.") == "It costs 5 .");
  CHECK(tokenize_13a("0.5 and .5") == "0.5 and . 5");
  CHECK(tokenize_13a("e.g.") == "e . g .");
  CHECK(tokenize_13a("1,a") == "1 , a");
  // Dash is split only after a digit.
  CHECK(tokenize_13a("1990-2000 a-5") == "1990 - 2000 a-5");
}

TEST_CASE("13a tokenizer unescapes entities and drops <skipped>", "[metrics]") {
  CHECK(tokenize_13a("&quot;Hi&quot; &amp; bye") == "\" Hi \" & bye");
  CHECK(tokenize_13a("a &lt;b&gt;") == "a < b >");
  // Replacements run in sequence: &amp;lt; -> &lt; -> <
  CHECK(tokenize_13a("a &amp;lt; b") == "a < b");
  CHECK(tokenize_13a("a <skipped> b") == "a b");
  CHECK(tokenize_13a("hyphen-\nated\nline") == "hyphenated line");
}

TEST_CASE("13a tokenizer handles UTF-8 and Unicode whitespace", "[metrics]") {
  CHECK(tokenize_13a("caf\u00e9, na\u00efve.") == "caf\u00e9 , na\u00efve .");
  CHECK(tokenize_13a("a\u00a0b\u3000c") == "a b c");  // NBSP and ideographic space split
}

TEST_CASE("BLEU of a perfect match is 100", "[metrics]") {
  // "The cat sat on the mat." -> 7 tokens; all 7/6/5/4 n-grams match.
  const auto s = corpus_bleu({"The cat sat on the mat."}, {"The cat sat on the mat."});
  CHECK(s.score == Approx(100.0).margin(1e-9));
  CHECK(s.correct == std::array<long, 4>{7, 6, 5, 4});
  CHECK(s.total == std::array<long, 4>{7, 6, 5, 4});
  CHECK(s.brevity_penalty == 1.0);
  CHECK(s.format() == "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 "
                      "hyp_len = 7 ref_len = 7)");
}

TEST_CASE("BLEU of an empty hypothesis is 0", "[metrics]") {
  // hyp_len 0 < ref_len 3 -> BP = 0; no matches -> early exit with precisions 0.
  const auto s = corpus_bleu({""}, {"The cat sat"});
  CHECK(s.score == 0.0);
  CHECK(s.hyp_len == 0);
  CHECK(s.ref_len == 3);
  CHECK(s.brevity_penalty == 0.0);
  CHECK(s.format() ==
        "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 3)");
}

TEST_CASE("BLEU of an empty corpus is 0", "[metrics]") {
  // 0 < 0 is false, so BP stays 1; ratio is 0 when ref_len is 0.
  const auto s = corpus_bleu({}, {});
  CHECK(s.score == 0.0);
  CHECK(s.format() ==
        "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 hyp_len = 0 ref_len = 0)");
}

TEST_CASE("BLEU of a single sentence with partial matches", "[metrics]") {
  // hyp: the cat is on the mat     ref: the cat sat on the mat   (6 / 6 tokens)
  // 1-grams: the x2, cat, on, mat match; "is" does not          -> 5/6
  // 2-grams: "the cat", "on the", "the mat" of 5                -> 3/5
  // 3-grams: "on the mat" of 4                                  -> 1/4
  // 4-grams: none of 3 -> exp smoothing, 1st zero order: 100/(2*3) = 16.667%
  // BP = 1. BLEU = (500/6 * 60 * 25 * 100/6)^(1/4) = (75e6/36)^(1/4) = 37.99178428
  const auto s = corpus_bleu({"the cat is on the mat"}, {"the cat sat on the mat"});
  CHECK(s.correct == std::array<long, 4>{5, 3, 1, 0});
  CHECK(s.total == std::array<long, 4>{6, 5, 4, 3});
  CHECK(s.precisions[0] == Approx(500.0 / 6));
  CHECK(s.precisions[3] == Approx(100.0 / 6));
  CHECK(s.score == Approx(std::pow(75e6 / 36, 0.25)).margin(1e-6));
  CHECK(s.score == Approx(37.99178428).margin(1e-6));
  CHECK(s.format() ==
        "BLEU = 37.99 83.3/60.0/25.0/16.7 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)");
}

TEST_CASE("BLEU of a two-sentence corpus sums statistics and applies BP", "[metrics]") {
  // Sentence 1 as above: correct 5/3/1/0, total 6/5/4/3, lengths 6/6.
  // Sentence 2: "Hello , world !" vs "Hello , big world !" (4 / 5 tokens)
  //   1-grams 4/4; 2-grams "Hello ,", "world !" of 3 -> 2/3; 3-grams 0/2; 4-grams 0/1.
  // Corpus: correct 9/5/1/0, total 10/8/6/4, hyp_len 10, ref_len 11.
  // Precisions 90, 62.5, 16.667, and 100/(2*4) = 12.5 (smoothed).
  // BP = exp(1 - 11/10) = exp(-0.1) = 0.904837418
  // BLEU = exp(-0.1) * (90 * 62.5 * 100/6 * 12.5)^(1/4) = exp(-0.1) * 1171875^(1/4)
  //      = 29.77082530
  const auto s = corpus_bleu({"the cat is on the mat", "Hello, world!"},
                             {"the cat sat on the mat", "Hello, big world!"});
  CHECK(s.correct == std::array<long, 4>{9, 5, 1, 0});
  CHECK(s.total == std::array<long, 4>{10, 8, 6, 4});
  CHECK(s.hyp_len == 10);
  CHECK(s.ref_len == 11);
  CHECK(s.brevity_penalty == Approx(std::exp(-0.1)));
  CHECK(s.precisions[3] == Approx(12.5));
  CHECK(s.score == Approx(std::exp(-0.1) * std::pow(1171875.0, 0.25)).margin(1e-6));
  CHECK(s.score == Approx(29.77082530).margin(1e-6));
  CHECK(s.format() ==
        "BLEU = 29.77 90.0/62.5/16.7/12.5 (BP = 0.905 ratio = 0.909 hyp_len = 10 ref_len = 11)");
}

TEST_CASE("BLEU exp smoothing halves again for each further zero order", "[metrics]") {
  // hyp "a b c d" vs ref "a x b y": 1-grams a, b -> 2/4; 2/3/4-grams 0/3, 0/2, 0/1.
  // Smoothed: 100/(2*3) = 16.667, 100/(4*2) = 12.5, 100/(8*1) = 12.5.
  // BLEU = (50 * 100/6 * 12.5 * 12.5)^(1/4) = 18.99589214
  const auto s = corpus_bleu({"a b c d"}, {"a x b y"});
  CHECK(s.precisions[1] == Approx(100.0 / 6));
  CHECK(s.precisions[2] == Approx(12.5));
  CHECK(s.precisions[3] == Approx(12.5));
  CHECK(s.score == Approx(18.99589214).margin(1e-6));
}

TEST_CASE("BLEU edge cases: no matches, too short for 4-grams", "[metrics]") {
  // No match at any order: early exit, score and all precisions 0.
  const auto none = corpus_bleu({"foo bar"}, {"baz qux"});
  CHECK(none.score == 0.0);
  CHECK(none.precisions == std::array<double, 4>{0, 0, 0, 0});
  // Two tokens: no 3-/4-grams, so the loop stops and log(0) is floored -> 0,
  // even though the sentence matches perfectly (effective order is off).
  const auto short_hyp = corpus_bleu({"the cat"}, {"the cat"});
  CHECK(short_hyp.score == 0.0);
  CHECK(short_hyp.precisions == std::array<double, 4>{100, 100, 0, 0});
}

TEST_CASE("BLEU is case-sensitive and clips repeated n-grams", "[metrics]") {
  // "the the the the" vs "The cat the mat": only one lowercase "the" in ref -> 1/4.
  const auto s = corpus_bleu({"the the the the"}, {"The cat the mat"});
  CHECK(s.correct[0] == 1);
  CHECK(s.total[0] == 4);
}

TEST_CASE("metrics reject mismatched hypothesis and reference counts", "[metrics]") {
  CHECK_THROWS_AS(corpus_bleu({"a", "b"}, {"a"}), nmt::Error);
  CHECK_THROWS_AS(corpus_chrf({"a"}, {}), nmt::Error);
}

TEST_CASE("signatures give sacreBLEU 2.x's defaults and name this scorer", "[metrics]") {
  CHECK(nmt::bleu_signature() == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|scorer:nmt-eval|agrees:sacrebleu-2.6.0");
  CHECK(nmt::chrf_signature() == "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|scorer:nmt-eval|agrees:sacrebleu-2.6.0");
}

TEST_CASE("chrF of a single sentence, worked by hand", "[metrics]") {
  // hyp "cat" vs ref "cats":
  //   n=1: c,a,t of c,a,t,s   P 3/3, R 3/4
  //   n=2: ca,at of ca,at,ts  P 2/2, R 2/3
  //   n=3: cat of cat,ats     P 1/1, R 1/2
  //   n=4: hyp has none -> order skipped; n=5,6: ref has none -> skipped.
  // avgP = 1, avgR = (3/4 + 2/3 + 1/2)/3 = 23/36
  // chrF2 = 5 P R / (4 P + R) = (115/36) / (167/36) = 115/167 = 68.86227545%
  const auto s = corpus_chrf({"cat"}, {"cats"});
  CHECK(s.score == Approx(100.0 * 115 / 167).margin(1e-9));
  CHECK(s.format() == "chrF2 = 68.86");
  // Whitespace is removed before counting characters.
  CHECK(corpus_chrf({"c a  t"}, {"ca ts"}).score == Approx(s.score).margin(1e-12));
}

TEST_CASE("chrF sums statistics over the corpus before the F-score", "[metrics]") {
  // "cat"/"cats": per order (hyp, ref, match) = (3,4,3) (2,3,2) (1,2,1) (0,1,0)
  // "dog"/"dog":                                (3,3,3) (2,2,2) (1,1,1) (0,0,0)
  // Sum: (6,7,6) (4,5,4) (2,3,2) (0,1,0)  -> 3 effective orders, P = 1,
  // R = (6/7 + 4/5 + 2/3)/3 = 244/315, chrF2 = 5R/(4+R) = 1220/1504 = 81.11702128%
  // (averaging sentence scores instead would give (68.86 + 100)/2 = 84.43).
  const auto s = corpus_chrf({"cat", "dog"}, {"cats", "dog"});
  CHECK(s.score == Approx(100.0 * 1220 / 1504).margin(1e-9));
}

TEST_CASE("chrF ignores hypothesis n-grams of orders the reference lacks", "[metrics]") {
  // hyp "abcdefg" vs ref "ab": n=1 P 2/7 R 1; n=2 P 1/6 R 1; n>=3 the ref has no
  // n-grams, so sacreBLEU zeroes the hyp count and the order drops out.
  // avgP = (2/7 + 1/6)/2 = 19/84, avgR = 1 -> chrF2 = (95/84)/(160/84) = 59.375%
  CHECK(corpus_chrf({"abcdefg"}, {"ab"}).score == Approx(59.375).margin(1e-9));
}

TEST_CASE("chrF counts Unicode code points, not bytes", "[metrics]") {
  // "größe" vs "große" (5 code points each; P = R at every order):
  //   n=1 4/5 (g,r,ß,e), n=2 2/4 (gr,ße), n=3 0/3, n=4 0/2, n=5 0/1, n=6 none.
  // Five effective orders: avg = (0.8 + 0.5)/5 = 0.26 -> chrF2 = 26%
  CHECK(corpus_chrf({"gr\u00f6\u00dfe"}, {"gro\u00dfe"}).score == Approx(26.0).margin(1e-9));
}

TEST_CASE("chrF edge cases: perfect, empty hypothesis, empty corpus", "[metrics]") {
  CHECK(corpus_chrf({"The cat sat."}, {"The cat sat."}).score == Approx(100.0).margin(1e-9));
  // Empty hyp: every order has n_hyp = 0, so no effective order -> 0.
  CHECK(corpus_chrf({""}, {"The cat sat."}).score == 0.0);
  CHECK(corpus_chrf({}, {}).score == 0.0);
  CHECK(corpus_chrf({}, {}).format() == "chrF2 = 0.00");
}
