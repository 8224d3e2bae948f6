#pragma once
// Corpus-level BLEU and chrF, computed the way sacreBLEU 2.x computes them with
// its default settings, so numbers printed by our tools can be compared
// directly with published sacreBLEU scores. Standard library only.
//
// Strings are UTF-8. Like sacreBLEU (which works on Python str), chrF counts
// Unicode code points and both metrics split on Python's notion of whitespace.
#include <array>
#include <string>
#include <vector>

namespace nmt {

/// sacreBLEU's "13a" tokenizer (mteval-v13a.pl): unescapes a few XML entities,
/// removes "<skipped>", pads punctuation with spaces, splits '.' and ',' unless
/// they sit next to a digit, splits '-' after a digit, and collapses whitespace.
std::string tokenize_13a(const std::string& line);

struct BleuScore {
  double score = 0;                        // 0..100
  std::array<long, 4> correct{}, total{};  // matched / total n-grams, n = 1..4
  std::array<double, 4> precisions{};      // percent, smoothed as sacreBLEU does
  double brevity_penalty = 0;
  long hyp_len = 0, ref_len = 0;

  /// "BLEU = 34.12 65.1/40.2/27.0/18.5 (BP = 1.000 ratio = 1.012 hyp_len = 123
  /// ref_len = 121)", exactly as sacreBLEU prints it.
  std::string format() const;
};

/// Corpus BLEU with one reference per hypothesis and sacreBLEU's defaults:
/// 13a tokenisation, case-sensitive, "exp" smoothing, no effective order.
/// Throws std::invalid_argument if the two lists differ in length.
/// Unlike sacreBLEU, an empty reference line is scored (as length 0) rather
/// than rejected, so one blank line does not abort a whole evaluation.
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references);

/// sacreBLEU's signature, naming this scorer in place of sacreBLEU's version:
/// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|scorer:nmt-eval|agrees:sacrebleu-2.6.0"
std::string bleu_signature();

struct ChrfScore {
  double score = 0;  // 0..100
  /// "chrF2 = 61.58", as sacreBLEU prints it.
  std::string format() const;
};

/// Corpus chrF with sacreBLEU 2.x defaults: character order 6, word order 0,
/// beta 2, whitespace removed, effective-order averaging (eps_smoothing off).
/// Statistics are summed over the corpus before the F-score is computed.
/// Throws std::invalid_argument if the two lists differ in length.
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references);

/// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|scorer:nmt-eval|agrees:sacrebleu-2.6.0"
std::string chrf_signature();

}  // namespace nmt
