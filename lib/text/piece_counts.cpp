#include "nmt/text/piece_counts.h"

#include "nmt/base/error.h"

namespace nmt {

std::vector<int64_t> count_source_pieces(const TokenCorpus& corpus, int pieces) {
  std::vector<int64_t> counts(static_cast<size_t>(pieces), 0);
  std::vector<int> source, target;
  for (size_t pair = 0; pair < corpus.size(); ++pair) {
    corpus.read(pair, source, target);
    for (const int id : source) {
      if (id < 0 || id >= pieces)
        throw Error("source id " + std::to_string(id) + " of pair " + std::to_string(pair + 1) +
                    " is outside the tokenizer's " + std::to_string(pieces) + " pieces");
      ++counts[static_cast<size_t>(id)];
    }
  }
  return counts;
}

}  // namespace nmt
