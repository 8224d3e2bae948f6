// BLEU and chrF as in sacreBLEU 2.x (sacrebleu/metrics/bleu.py, chrf.py,
// tokenizers/tokenizer_13a.py, tokenizer_re.py). The arithmetic follows the
// Python code operation by operation so that scores agree to the last bit,
// not just to the printed two decimals.
#include "nmt/eval/metrics.h"

#include "nmt/base/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace nmt {
namespace {

// The signatures name this scorer and the sacreBLEU it agrees with: sacreBLEU 2.6.0 gives
// the same BLEU and chrF on the outputs of four test sets (the code follows 2.x's Python).
constexpr const char* kScorer = "scorer:nmt-eval|agrees:sacrebleu-2.6.0";
constexpr int kBleuOrder = 4;
constexpr int kChrfOrder = 6;
constexpr double kChrfBeta = 2;

// ---------------------------------------------------------------- UTF-8 ----

// Decodes the code point at s[i] and advances i. sacreBLEU sees Python str,
// i.e. code points; a malformed byte is kept as one "character" (mapped into
// the low-surrogate range like Python's surrogateescape) instead of throwing,
// so that a stray byte in a system output cannot abort an evaluation.
char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return 0xDC00 + b0;
  }
  char32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return 0xDC00 + b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  i += len;
  return cp;
}

// Python's str.isspace(), which is what str.split() and str.strip() use.
bool is_py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// Python's line.split(): maximal runs of non-whitespace.
std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> words;
  size_t start = std::string_view::npos;
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    const bool space = is_py_space(next_code_point(s, i));
    if (space && start != std::string_view::npos) {
      words.push_back(s.substr(start, at - start));
      start = std::string_view::npos;
    } else if (!space && start == std::string_view::npos) {
      start = at;
    }
  }
  if (start != std::string_view::npos) words.push_back(s.substr(start));
  return words;
}

// Python's line.rstrip().
std::string_view rstrip_ws(std::string_view s) {
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    if (!is_py_space(next_code_point(s, i))) end = i;
  }
  return s.substr(0, end);
}

// ------------------------------------------------------------------ 13a ----

// Python's str.replace: one left-to-right pass, matches do not overlap and
// text produced by a replacement is not rescanned.
std::string substitute_all(const std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos).append(to);
  }
  return out.append(s, pos, std::string::npos);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// The class [\{-\~\[-\` -\&\(-\+\:-\@\/] of tokenizer_re.py: ASCII punctuation
// except ' , - . (those get context-dependent rules below).
bool is_padded_punct(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// re.sub for a two-character pattern ([first][second]) with Python's
// semantics: leftmost match, then resume after it (no overlaps). Working on
// bytes is equivalent to working on code points here because every class
// that can match a non-ASCII character ([^0-9]) is paired with an ASCII-only
// one, so a match can never split a multi-byte sequence differently.
template <class First, class Second, class Emit>
std::string sub_pairs(const std::string& s, First first, Second second, Emit emit) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  size_t i = 0;
  for (; i + 1 < s.size(); ++i) {
    if (first(s[i]) && second(s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      ++i;  // the pair is consumed
    } else {
      out += s[i];
    }
  }
  if (i < s.size()) out += s[i];
  return out;
}

std::string apply_13a_regexes(const std::string& line) {
  std::string s;
  s.reserve(line.size() * 2);
  for (char c : line) {  // r' \1 ' around each punctuation character
    if (is_padded_punct(c)) {
      s.append(1, ' ').append(1, c).append(1, ' ');
    } else {
      s += c;
    }
  }
  auto not_digit = [](char c) { return !is_digit(c); };
  // Period/comma not preceded by a digit: r'\1 \2 '
  s = sub_pairs(s, not_digit, is_period_or_comma, [](std::string& o, char a, char b) {
    o.append(1, a).append(1, ' ').append(1, b).append(1, ' ');
  });
  // Period/comma not followed by a digit: r' \1 \2'
  s = sub_pairs(s, is_period_or_comma, not_digit, [](std::string& o, char a, char b) {
    o.append(1, ' ').append(1, a).append(1, ' ').append(1, b);
  });
  // Dash preceded by a digit: r'\1 \2 '
  return sub_pairs(s, is_digit, [](char c) { return c == '-'; },
                   [](std::string& o, char a, char b) {
                     o.append(1, a).append(1, ' ').append(1, b).append(1, ' ');
                   });
}

// ----------------------------------------------------------------- BLEU ----

using Ngram = std::array<int, kBleuOrder>;  // token ids, unused slots are -1

struct NgramHash {
  size_t operator()(const Ngram& g) const {
    size_t h = 0;
    for (int id : g) h = h * 1000003u + static_cast<size_t>(id + 1);
    return h;
  }
};

using NgramCounts = std::unordered_map<Ngram, long, NgramHash>;

std::vector<std::string_view> bleu_tokens(const std::string& line, std::string& storage) {
  storage = tokenize_13a(std::string(rstrip_ws(line)));  // sacreBLEU rstrips first
  return split_ws(storage);
}

// Ids are only compared within one hypothesis/reference pair, so a small
// per-segment vocabulary is enough and keeps n-gram keys cheap to hash.
std::vector<int> to_ids(const std::vector<std::string_view>& words,
                        std::unordered_map<std::string_view, int>& vocab) {
  std::vector<int> ids;
  ids.reserve(words.size());
  for (auto w : words) ids.push_back(vocab.emplace(w, static_cast<int>(vocab.size())).first->second);
  return ids;
}

std::array<NgramCounts, kBleuOrder> count_ngrams(const std::vector<int>& ids) {
  std::array<NgramCounts, kBleuOrder> counts;
  for (size_t n = 1; n <= kBleuOrder; ++n) {
    for (size_t i = 0; i + n <= ids.size(); ++i) {
      Ngram g;
      g.fill(-1);
      std::copy(ids.begin() + i, ids.begin() + i + n, g.begin());
      ++counts[n - 1][g];
    }
  }
  return counts;
}

// Adds one segment's lengths and clipped n-gram matches to the corpus totals.
void add_segment_stats(const std::string& hyp, const std::string& ref, BleuScore& acc) {
  std::string hyp_buf, ref_buf;
  const auto hyp_words = bleu_tokens(hyp, hyp_buf);
  const auto ref_words = bleu_tokens(ref, ref_buf);
  std::unordered_map<std::string_view, int> vocab;
  const auto hyp_counts = count_ngrams(to_ids(hyp_words, vocab));
  const auto ref_counts = count_ngrams(to_ids(ref_words, vocab));
  acc.hyp_len += static_cast<long>(hyp_words.size());
  acc.ref_len += static_cast<long>(ref_words.size());
  for (int n = 0; n < kBleuOrder; ++n) {
    for (const auto& [gram, count] : hyp_counts[n]) {
      acc.total[n] += count;
      const auto it = ref_counts[n].find(gram);
      if (it != ref_counts[n].end()) acc.correct[n] += std::min(count, it->second);
    }
  }
}

// sacreBLEU's my_log: log(0) is floored instead of being -inf.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

// BLEU.compute_bleu with smooth_method='exp' and effective_order=False.
void compute_bleu(BleuScore& s) {
  if (s.hyp_len < s.ref_len) {
    s.brevity_penalty =
        s.hyp_len > 0 ? std::exp(1 - static_cast<double>(s.ref_len) / s.hyp_len) : 0.0;
  } else {
    s.brevity_penalty = 1.0;
  }
  s.precisions.fill(0.0);
  s.score = 0.0;
  if (std::all_of(s.correct.begin(), s.correct.end(), [](long c) { return c == 0; })) return;

  // NIST "exp" smoothing: the k-th order with no match gets 1 / 2^k of a
  // match. An order with no hypothesis n-grams at all stops the loop and
  // keeps precision 0, which drives the score to 0 (sentence shorter than 4).
  double smooth = 1.0;
  for (int n = 0; n < kBleuOrder; ++n) {
    if (s.total[n] == 0) break;
    if (s.correct[n] == 0) {
      smooth *= 2;
      s.precisions[n] = 100.0 / (smooth * s.total[n]);
    } else {
      s.precisions[n] = 100.0 * s.correct[n] / s.total[n];
    }
  }
  double log_sum = 0.0;
  for (double p : s.precisions) log_sum += floored_log(p);
  s.score = s.brevity_penalty * std::exp(log_sum / kBleuOrder);
}

void check_same_size(size_t hyps, size_t refs, const char* metric) {
  if (hyps != refs) {
    throw Error(std::string(metric) + ": " + std::to_string(hyps) +
                                " hypotheses but " + std::to_string(refs) + " references");
  }
}

// ----------------------------------------------------------------- chrF ----

// Python's ''.join(line.split()) as code points.
std::u32string chars_without_space(const std::string& line) {
  std::u32string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    const char32_t c = next_code_point(line, i);
    if (!is_py_space(c)) out += c;
  }
  return out;
}

using CharCounts = std::unordered_map<std::u32string_view, long>;

CharCounts count_char_ngrams(const std::u32string& s, size_t n) {
  CharCounts counts;
  for (size_t i = 0; i + n <= s.size(); ++i) ++counts[std::u32string_view(s).substr(i, n)];
  return counts;
}

// Per order: [hyp n-grams, ref n-grams, matches], as CHRF._get_match_statistics.
using ChrfStats = std::array<std::array<long, 3>, kChrfOrder>;

void add_chrf_segment(const std::string& hyp, const std::string& ref, ChrfStats& acc) {
  const auto h = chars_without_space(hyp);
  const auto r = chars_without_space(ref);
  for (size_t n = 1; n <= kChrfOrder; ++n) {
    const auto hyp_counts = count_char_ngrams(h, n);
    const auto ref_counts = count_char_ngrams(r, n);
    long hyp_total = 0, matches = 0;
    for (const auto& [gram, count] : hyp_counts) {
      hyp_total += count;
      const auto it = ref_counts.find(gram);
      if (it != ref_counts.end()) matches += std::min(count, it->second);
    }
    const long ref_total = r.size() >= n ? static_cast<long>(r.size() - n + 1) : 0;
    // sacreBLEU drops the hypothesis count when the reference has no n-grams
    // of this order, so the order falls out of the effective-order average.
    acc[n - 1][0] += ref_total > 0 ? hyp_total : 0;
    acc[n - 1][1] += ref_total;
    acc[n - 1][2] += matches;
  }
}

// CHRF._compute_f_score with eps_smoothing=False: precision and recall are
// averaged over the orders where both sides have n-grams, then combined.
double chrf_f_score(const ChrfStats& stats) {
  double avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (const auto& [n_hyp, n_ref, n_match] : stats) {
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += static_cast<double>(n_match) / n_hyp;
      avg_rec += static_cast<double>(n_match) / n_ref;
      ++effective_order;
    }
  }
  if (effective_order == 0) return 0.0;
  avg_prec /= effective_order;
  avg_rec /= effective_order;
  if (avg_prec + avg_rec == 0.0) return 0.0;
  const double factor = kChrfBeta * kChrfBeta;
  double score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

std::string printf_string(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

}  // namespace

std::string tokenize_13a(const std::string& line) {
  std::string s = substitute_all(line, "<skipped>", "");
  s = substitute_all(s, "-\n", "");  // re-join words hyphenated across lines
  s = substitute_all(s, "\n", " ");
  s = substitute_all(s, "&quot;", "\"");
  s = substitute_all(s, "&amp;", "&");
  s = substitute_all(s, "&lt;", "<");
  s = substitute_all(s, "&gt;", ">");
  // The surrounding spaces let the period/comma rules see a non-digit at both
  // ends of the line, so a final "end." is split.
  s = apply_13a_regexes(" " + s + " ");
  std::string out;
  out.reserve(s.size());
  for (auto word : split_ws(s)) {
    if (!out.empty()) out += ' ';
    out.append(word);
  }
  return out;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references) {
  check_same_size(hypotheses.size(), references.size(), "BLEU");
  BleuScore s;
  for (size_t i = 0; i < hypotheses.size(); ++i) add_segment_stats(hypotheses[i], references[i], s);
  compute_bleu(s);
  return s;
}

std::string BleuScore::format() const {
  std::string out = "BLEU = " + printf_string("%.2f", score) + " ";
  for (int n = 0; n < kBleuOrder; ++n) {
    out += printf_string("%.1f", precisions[n]) + (n + 1 < kBleuOrder ? "/" : "");
  }
  const double ratio = ref_len ? static_cast<double>(hyp_len) / ref_len : 0.0;
  out += " (BP = " + printf_string("%.3f", brevity_penalty);
  out += " ratio = " + printf_string("%.3f", ratio);
  out += " hyp_len = " + std::to_string(hyp_len) + " ref_len = " + std::to_string(ref_len) + ")";
  return out;
}

std::string bleu_signature() {
  return std::string("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|") + kScorer;
}

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::string>& references) {
  check_same_size(hypotheses.size(), references.size(), "chrF");
  ChrfStats stats{};
  for (size_t i = 0; i < hypotheses.size(); ++i) add_chrf_segment(hypotheses[i], references[i], stats);
  return ChrfScore{chrf_f_score(stats)};
}

std::string ChrfScore::format() const { return "chrF2 = " + printf_string("%.2f", score); }

std::string chrf_signature() {
  return std::string("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|") + kScorer;
}

}  // namespace nmt
