#pragma once
// Attention export for nmt-align: turns a hypothesis (translated or force-decoded) into
// one JSON object with the pieces the model saw, the attention matrices
// [target position][source position], optional word-level aggregation and hard
// alignments in Pharaoh format. The format is documented in docs/align.schema.json.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "nmt/models/checkpoint.h"
#include "nmt/decoding/search.h"

namespace nmt {

struct AttentionExportOptions {
  /// Transformer decoder layers to export: "all", "last" or a 0-based index.
  std::string layers = "all";
  bool all_heads = true;         ///< every head, or only the head-mean of each layer
  bool self_attention = false;   ///< encoder and decoder self-attention (Transformer)
  bool word_level = false;       ///< matrices over words instead of pieces
};

/// Which decoder layers `spec` names for a model with `layer_count` layers. Throws
/// nmt::Error for an unknown spec, an index out of range, or a model without layers.
std::vector<int64_t> select_layers(const std::string& spec, int64_t layer_count, const std::string& model_name);

/// Words of a SentencePiece piece sequence: a piece starting with U+2581 begins a new
/// word; "</s>" is a word of its own. Returns, per piece, the index of its word.
std::vector<int64_t> word_index_of_pieces(const std::vector<std::string>& pieces);

/// Aggregates a [T][S] piece matrix to words: summed over the source pieces of a word,
/// averaged over the target pieces of a word (rows stay distributions).
std::vector<std::vector<double>> aggregate_to_words(const std::vector<std::vector<double>>& matrix,
                                                    const std::vector<int64_t>& target_words,
                                                    const std::vector<int64_t>& source_words);

/// Hard alignment from a word-level matrix: each target word (eos excluded) links to its
/// most attended source word (eos excluded). Pharaoh "src-tgt" pairs, 0-based. The last
/// column is always the source eos; the last row is the target eos if `target_has_eos`.
std::string pharaoh_alignment(const std::vector<std::vector<double>>& word_matrix, bool target_has_eos);

struct ExportInput {
  long line = 0;
  std::string mode;                 ///< "translate" or "force"
  std::string source_text;
  std::vector<int> source_ids;      ///< without eos
  const Hypothesis* hypothesis = nullptr;  ///< with keep_attention
  std::string target_text;          ///< detokenized
};

/// Builds the JSON object of one sentence (see docs/align.schema.json).
nlohmann::json export_attention(const LoadedModel& model, const ExportInput& input,
                                const AttentionExportOptions& options);

/// A JSON object for a line that could not be processed (keeps line numbers aligned).
nlohmann::json skipped_line(long line, const std::string& mode, const std::string& warning);

}  // namespace nmt
