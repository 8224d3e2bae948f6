#pragma once
// The decoder's self-attention caches inside a DecoderState (lib/ only). Per layer, a
// key and a value buffer in state.buffers (never reordered or selected); one table of
// buffer rows in state.hypothesis (reordered with the hypotheses) that says where each
// hypothesis's positions live. See KeyValueCache for why this needs no prefix copies.
#include <string>
#include <vector>

#include "nmt/models/model.h"
#include "nmt/models/transformer/multi_head_attention.h"

namespace nmt {

class SelfAttentionCaches {
 public:
  SelfAttentionCaches(int64_t layers, int64_t heads, int64_t head_dim);

  /// Empty caches for `rows` hypotheses (no positions yet).
  void initialise(DecoderState& state, int64_t rows, const torch::TensorOptions& options) const;
  /// The caches for step `state.step` of `rows` hypotheses: room for one more position
  /// (grown in chunks; a buffer another DecoderState shares is copied, never written) and
  /// the table's new column set to 0..rows-1. The buffers are moved out of `state`
  /// until close() moves them back.
  std::vector<KeyValueCache> open(DecoderState& state, int64_t rows) const;
  void close(DecoderState& state, std::vector<KeyValueCache>& caches) const;

 private:
  std::vector<std::string> key_names_, value_names_;
  int64_t heads_, head_dim_;
};

}  // namespace nmt
