// libFuzzer: sacreBLEU's 13a tokenizer, BLEU and chrF on arbitrary text (the input is split
// into hypothesis and reference lines). Scores must stay within [0, 100].
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "nmt/eval/metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)nmt::tokenize_13a(text);
  std::vector<std::string> hypotheses, references;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) (hypotheses.size() <= references.size() ? hypotheses : references).push_back(line);
  references.resize(hypotheses.size());
  const double bleu = nmt::corpus_bleu(hypotheses, references).score;
  const double chrf = nmt::corpus_chrf(hypotheses, references).score;
  if (!(bleu >= 0 && bleu <= 100.0000001) || !(chrf >= 0 && chrf <= 100.0000001)) __builtin_trap();
  return 0;
}
