#pragma once
// How often each source piece occurs in a corpus: stored in checkpoints, so that input unlike
// the training data can be told at translation time (decoding/input_familiarity.h).
#include <cstdint>
#include <vector>

#include "nmt/text/token_corpus.h"

namespace nmt {

/// One count per id in [0, pieces) over the source side of every pair of `corpus` (streamed:
/// one pair in memory at a time).
std::vector<int64_t> count_source_pieces(const TokenCorpus& corpus, int pieces);

}  // namespace nmt
