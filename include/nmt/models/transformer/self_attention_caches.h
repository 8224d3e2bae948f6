#pragma once
// The decoder's self-attention caches of every layer for all the hypotheses of a search:
// per layer, a key and a value buffer that reorders never copy, and one table of buffer
// rows, reordered with the hypotheses, that says where each hypothesis's positions live.
// See KeyValueCache for why this needs no prefix copies.
#include <torch/types.h>

#include <vector>

#include "nmt/models/transformer/multi_head_attention.h"

namespace nmt {

class SelfAttentionCaches {
 public:
  SelfAttentionCaches() = default;
  /// Empty caches (no positions yet) for `rows` hypotheses.
  SelfAttentionCaches(int64_t layers, int64_t rows, int64_t heads, int64_t head_dim,
                      const torch::TensorOptions& options);

  /// The caches for decoding position `step` of `rows` hypotheses: room for one more
  /// position (grown in chunks; a buffer another state shares is copied, never written)
  /// and the table's column `step` set to 0..rows-1. The buffers are moved out until
  /// close() moves them back.
  std::vector<KeyValueCache> open(int64_t rows, int64_t step);
  void close(std::vector<KeyValueCache>& caches);
  /// Hypothesis i continues old hypothesis index[i]: only the table moves.
  void reorder(const torch::Tensor& index) { rows_ = rows_.index_select(0, index); }

  const torch::Tensor& keys(size_t layer) const { return keys_[layer]; }
  const torch::Tensor& values(size_t layer) const { return values_[layer]; }
  /// [hypotheses, capacity] int64: buffer row of each filled position.
  const torch::Tensor& rows() const { return rows_; }

 private:
  std::vector<torch::Tensor> keys_, values_;  // per layer [N, H, capacity, dk]
  torch::Tensor rows_;
};

}  // namespace nmt
