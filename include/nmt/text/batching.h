#pragma once
// Token-based batching with length bucketing: sentences of similar length share a
// batch (little padding), a batch holds about `batch_tokens` tokens, and the batch
// order is shuffled by seed so every epoch is reproducible. Planning reads only the
// lengths, never the ids: a corpus of any size is planned without loading it.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "nmt/text/token_corpus.h"

namespace nmt {

struct Batch {
  torch::Tensor source;         ///< [B, S] ids + eos, padded with 0
  torch::Tensor target_input;   ///< [B, T] bos + ids
  torch::Tensor target_output;  ///< [B, T] ids + eos (0 = padding, ignored by the loss)
  int64_t target_tokens = 0;    ///< non-padding tokens in target_output
  std::vector<size_t> indices;  ///< corpus positions of the rows
};

/// The batches of one epoch: pair positions sorted by length (4 bytes a pair), cut into
/// ranges, the ranges in the order they are trained.
class BatchPlan {
 public:
  size_t size() const { return ranges_.size(); }
  /// Corpus positions of the rows of batch `b`.
  std::vector<size_t> batch(size_t b) const;
  /// Pairs in the plan (those within the length limit).
  size_t pairs() const { return order_.size(); }

 private:
  friend BatchPlan make_batches(const TokenCorpus&, int64_t, uint64_t, bool, size_t);
  struct Range {
    uint32_t begin, end;
  };
  std::vector<uint32_t> order_;
  std::vector<Range> ranges_;
};

/// Groups corpus positions into batches. The padded size of a batch,
/// rows x (longest side + 1), stays within `batch_tokens` (a single longer pair gets a
/// batch of its own). With shuffle, the order depends only on `seed`. Pairs with more
/// than `max_length` ids on either side (0 = no limit) are left out. Throws nmt::Error for
/// a corpus of 2^32 pairs or more.
BatchPlan make_batches(const TokenCorpus& corpus, int64_t batch_tokens, uint64_t seed, bool shuffle,
                       size_t max_length = 0);

/// Pairs of `corpus` with at most `max_length` ids on both sides (0 = no limit).
size_t count_within(const TokenCorpus& corpus, size_t max_length);

/// Builds the tensors of one batch (reads only these pairs' ids).
Batch collate(const TokenCorpus& corpus, const std::vector<size_t>& indices);

/// Pads id sequences into a [B, L] int64 tensor; `append` (if >= 0) is added after each.
torch::Tensor pad_sequences(const std::vector<const std::vector<int>*>& rows, int prepend, int append);

/// Deterministic Fisher-Yates shuffle (the standard library's distributions are not
/// specified across platforms; this is).
void deterministic_shuffle(std::vector<size_t>& items, uint64_t seed);
void deterministic_shuffle(std::vector<uint32_t>& items, uint64_t seed);

}  // namespace nmt
