#pragma once
// Which of Marian's Transformer items (src/models/transformer.h) is which of our weights: one
// table, read by the export (ours -> Marian) and the import (Marian -> ours), so the two cannot
// disagree. Marian stores a weight [out, in] of ours as [in, out] and a bias [out] as [1, out].
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/base/config.h"
#include "nmt/models/transformer/transformer_config.h"

namespace nmt {

enum class MarianLayout {
  transposed,  ///< ours [out, in] (rows first_row.. of it), Marian's [in, out]
  row,         ///< ours [out] (rows first_row..), Marian's [1, out]
  same,        ///< the same shape (embeddings [V, D])
};

/// Which vocabulary's order a weight's rows (or, transposed, columns) follow, if any.
enum class VocabularyAxis { none, source, target };

struct MarianWeightLink {
  std::string marian;     ///< e.g. "decoder_l1_context_Wk"
  std::string ours;       ///< e.g. "decoder.0.cross_attention.key_value.weight"
  MarianLayout layout = MarianLayout::same;
  int64_t first_row = 0;  ///< of ours, for a slice of a stacked projection
  int64_t rows = -1;      ///< -1: all
  VocabularyAxis vocabulary = VocabularyAxis::none;
};

/// Every weight of a Transformer with `config` (post-norm, or pre-norm with each stack's final
/// norm as Marian's transformer-postprocess-top n), embeddings and output layer included
/// (decoder_ff_logit_out_b only with output_bias: without one the export writes its own).
std::vector<MarianWeightLink> marian_weight_links(const TransformerConfig& config);

}  // namespace nmt
