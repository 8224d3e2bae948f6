#pragma once
// What batching needs from a tokenized parallel corpus: how many pairs, each side's
// length, and a pair's ids on demand. Held in memory (EncodedCorpus: validation sets,
// tests) or read from a prepared corpus file (PreparedCorpus: training at any size).
#include <cstddef>
#include <vector>

namespace nmt {

class TokenCorpus {
 public:
  virtual ~TokenCorpus() = default;
  virtual size_t size() const = 0;
  /// Ids on each side of pair `pair` (no bos/eos).
  virtual size_t source_length(size_t pair) const = 0;
  virtual size_t target_length(size_t pair) const = 0;
  /// The ids of both sides of one pair (no bos/eos), replacing the vectors' contents.
  virtual void read(size_t pair, std::vector<int>& source, std::vector<int>& target) const = 0;
};

}  // namespace nmt
