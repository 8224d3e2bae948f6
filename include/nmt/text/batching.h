#pragma once
// Token-based batching with length bucketing: sentences of similar length share a
// batch (little padding), a batch holds about `batch_tokens` tokens, and the batch
// order is shuffled by seed so every epoch is reproducible.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "nmt/text/corpus.h"

namespace nmt {

struct Batch {
  torch::Tensor source;         ///< [B, S] ids + eos, padded with 0
  torch::Tensor target_input;   ///< [B, T] bos + ids
  torch::Tensor target_output;  ///< [B, T] ids + eos (0 = padding, ignored by the loss)
  int64_t target_tokens = 0;    ///< non-padding tokens in target_output
  std::vector<size_t> indices;  ///< corpus positions of the rows
};

/// Groups corpus positions into batches. The padded size of a batch,
/// rows x (longest side + 1), stays within `batch_tokens` (a single longer pair gets a
/// batch of its own). With shuffle, the order depends only on `seed`.
std::vector<std::vector<size_t>> make_batches(const EncodedCorpus& corpus, int64_t batch_tokens,
                                              uint64_t seed, bool shuffle);

/// Builds the tensors of one batch.
Batch collate(const EncodedCorpus& corpus, const std::vector<size_t>& indices);

/// Pads id sequences into a [B, L] int64 tensor; `append` (if >= 0) is added after each.
torch::Tensor pad_sequences(const std::vector<const std::vector<int>*>& rows, int prepend, int append);

/// Deterministic Fisher-Yates shuffle (the standard library's distributions are not
/// specified across platforms; this is).
void deterministic_shuffle(std::vector<size_t>& items, uint64_t seed);

}  // namespace nmt
