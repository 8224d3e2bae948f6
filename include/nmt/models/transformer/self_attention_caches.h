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

  /// One step's caches, lent out of the table: a cache holds the only reference to its
  /// buffers while a layer writes into them (so no other state sees the write), and they
  /// go back to the table when this ends, however the step ends (a throw included).
  class Lent {
   public:
    Lent(Lent&&) = default;
    ~Lent() { owner_.take_back(caches_); }
    KeyValueCache& operator[](size_t layer) { return caches_.at(layer); }

   private:
    friend class SelfAttentionCaches;
    explicit Lent(SelfAttentionCaches& owner) : owner_(owner) {}
    SelfAttentionCaches& owner_;
    std::vector<KeyValueCache> caches_;
  };

  /// The caches for decoding position `step` of `rows` hypotheses: room for one more
  /// position (grown in chunks; a buffer another state shares is copied, never written)
  /// and the table's column `step` set to 0..rows-1. A throw while opening leaves the
  /// table as it was.
  Lent open(int64_t rows, int64_t step);
  /// Hypothesis i continues old hypothesis index[i]: only the table moves.
  void reorder(const torch::Tensor& index) { rows_ = rows_.index_select(0, index); }

  const torch::Tensor& keys(size_t layer) const { return keys_[layer]; }
  const torch::Tensor& values(size_t layer) const { return values_[layer]; }
  /// [hypotheses, capacity] int64: buffer row of each filled position.
  const torch::Tensor& rows() const { return rows_; }

 private:
  void take_back(std::vector<KeyValueCache>& caches) noexcept;

  std::vector<torch::Tensor> keys_, values_;  // per layer [N, H, capacity, dk]
  torch::Tensor rows_;
};

}  // namespace nmt
