#pragma once
// The one interface every model family implements and every algorithm drives:
// training (teacher-forced forward), greedy and beam search, forced decoding for
// attention export. Search code never asks which family it holds.
//
// Layout is batch-first everywhere: B = batch (or hypotheses), S = source length,
// T = target length, V = target vocabulary, L = decoder layers, H = attention heads.
#include <torch/nn/module.h>
#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "nmt/models/precision.h"

namespace nmt {

/// Encoder output plus everything the decoder computes once per source sentence.
/// Every tensor has the batch dimension first.
struct EncoderOutput {
  torch::Tensor memory;       ///< [B, S, D] encoder states
  torch::Tensor source_mask;  ///< [B, S] bool, true at real tokens (false at padding)
  std::map<std::string, torch::Tensor> extra;  ///< model-specific per-sentence tensors
};

/// Decoder state between steps. Every tensor has the hypothesis dimension first.
struct DecoderState {
  /// Differs between hypotheses of one sentence (RNN hidden state, self-attention
  /// caches): reordered by beam origin after every step.
  std::map<std::string, torch::Tensor> hypothesis;
  /// Same for all hypotheses of a sentence (encoder memory, projected keys): only
  /// selected when the set of sentences changes, never copied per step.
  std::map<std::string, torch::Tensor> sentence;
  /// Model-owned buffers that neither reorder() nor select() touch (the Transformer's
  /// self-attention caches, addressed through a table kept in `hypothesis`).
  std::map<std::string, torch::Tensor> buffers;
  /// Set by a model whose step() reads the `sentence` tensors of hypothesis row b at row
  /// sentence_rows[b]: select() then updates that index ([rows] int64) instead of
  /// copying every sentence tensor once per hypothesis (undefined = row b is row b).
  bool shares_sentence_rows = false;
  torch::Tensor sentence_rows;
  int64_t step = 0;  ///< target positions decoded so far
  /// Whether step() must fill StepOutput::attention and layer_attention. A search that
  /// neither keeps attention nor scores coverage clears it, so a model may skip the
  /// work (the Transformer's head means and per-layer copies); set once, after
  /// initial_state().
  bool want_attention = true;

  /// Reorders per-hypothesis tensors: row i becomes old row index[i]. `index` must only
  /// permute rows within a sentence's group of hypotheses.
  void reorder(const torch::Tensor& index);
  /// Selects rows of every tensor (e.g. expand each sentence to `beam` rows, or drop
  /// finished sentences); with shares_sentence_rows, of sentence_rows instead of the
  /// sentence tensors.
  void select(const torch::Tensor& index);
};

/// What one decoding step returns.
struct StepOutput {
  torch::Tensor log_probs;  ///< [B, V] log-softmax over the target vocabulary
  /// [B, S] the attention this step used, as one distribution over source positions
  /// (Transformer: head-mean of the alignment layer). Undefined for models without
  /// attention, and may be undefined when DecoderState::want_attention is false.
  torch::Tensor attention;
  /// Transformer only: cross-attention of every layer, each [B, H, S] (empty when
  /// DecoderState::want_attention is false).
  std::vector<torch::Tensor> layer_attention;
};

/// Self-attention weights for export (Transformer only), teacher-forced.
struct SelfAttentionWeights {
  std::vector<torch::Tensor> encoder;  ///< per encoder layer [B, H, S, S]
  std::vector<torch::Tensor> decoder;  ///< per decoder layer [B, H, T, T] (causal)
};

/// Teacher-forced output for training.
struct ForwardOutput {
  torch::Tensor logits;  ///< [B, T, V] unnormalised scores
};

class Seq2SeqModel : public torch::nn::Module {
 public:
  /// source: [B, S] int64 ids (no bos; eos at the end; pad = 0).
  virtual EncoderOutput encode(const torch::Tensor& source) = 0;
  /// The state before the first target token; `encoded` is moved into `state.sentence`.
  virtual DecoderState initial_state(const EncoderOutput& encoded) = 0;
  /// One step: previous tokens [B] (bos at the first step) -> log-probs for the next.
  virtual StepOutput step(const torch::Tensor& previous_tokens, DecoderState& state) = 0;
  /// Teacher forcing. target_input: [B, T] (bos + target without its last token).
  /// Must agree with running step() T times (tested for every family).
  virtual ForwardOutput forward(const torch::Tensor& source, const torch::Tensor& target_input) = 0;
  /// False for the plain GRU seq2seq (fixed context vector, nothing to export).
  virtual bool has_attention() const { return true; }
  /// Number of decoder layers with cross-attention (0 for RNNs, whose single attention
  /// is StepOutput::attention).
  virtual int64_t attention_layers() const { return 0; }
  /// The decoder layer whose head-mean is StepOutput::attention (-1 without layers).
  virtual int64_t alignment_layer() const { return -1; }
  /// True if self_attention() returns weights (the Transformer).
  virtual bool has_self_attention() const { return false; }
  /// Longest sequence (source or target, with eos/bos) the model can take; 0 = no limit.
  virtual int64_t max_positions() const { return 0; }
  /// Self-attention of every layer for a teacher-forced pair (same inputs as forward).
  /// Empty for families without self-attention (the RNNs).
  /// For inference only: converts what the precision needs (bf16: the Transformer's
  /// Linear weights, once). fp32 is a no-op. Throws nmt::Error for a family that does
  /// not implement `precision`, or to go back to fp32 after bf16 (the weights were rounded).
  virtual void set_inference_precision(Precision precision);
  virtual SelfAttentionWeights self_attention(const torch::Tensor& source, const torch::Tensor& target_input) {
    (void)source, (void)target_input;
    return {};
  }
  virtual ~Seq2SeqModel() = default;
};

using ModelPtr = std::shared_ptr<Seq2SeqModel>;

/// True at real tokens. source: [B, S] -> [B, S] bool.
inline torch::Tensor padding_mask(const torch::Tensor& ids) { return ids.ne(0); }

}  // namespace nmt
