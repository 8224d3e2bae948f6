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
#include <memory>
#include <string>
#include <vector>

#include "nmt/models/linear.h"
#include "nmt/models/linear_path.h"
#include "nmt/models/next_token_scores.h"

namespace nmt {

/// Encoder output plus everything the decoder computes once per source sentence.
/// Every tensor has the batch dimension first; a field a family does not use stays undefined.
struct EncoderOutput {
  torch::Tensor memory;       ///< [B, S, D] encoder states
  torch::Tensor source_mask;  ///< [B, S] bool, true at real tokens (false at padding)
  /// The RNN families: the encoder's final states [B, L*H], the attention decoder's bridge
  /// input and the GRU decoder's fixed context.
  torch::Tensor final_states;
  /// The Transformer: the additive padding bias of attention over the source [B, 1, 1, S].
  torch::Tensor source_bias;
  /// An ensemble: each member's own output, in member order (empty for one model).
  std::vector<EncoderOutput> members;
};

/// Decoder state between steps. Each family derives its own with typed fields
/// (TransformerState, AttentionState, GruState); the searches see only this interface.
/// Tensors are batch-first: one row per hypothesis, or per sentence for what all the
/// hypotheses of a sentence share.
class DecoderState {
 public:
  virtual ~DecoderState() = default;
  /// Reorders per-hypothesis tensors: row i becomes old row index[i]. `index` must only
  /// permute rows within a sentence's group of hypotheses (what they share is untouched).
  virtual void reorder(const torch::Tensor& index) = 0;
  /// Selects hypothesis rows: expands each sentence to `beam` rows, or drops finished
  /// sentences. What the hypotheses share follows (copied, or re-indexed).
  virtual void select(const torch::Tensor& index) = 0;
  /// A state that steps independently of this one (buffers may be shared until written).
  virtual std::unique_ptr<DecoderState> clone() const = 0;

  int64_t step = 0;  ///< target positions decoded so far
  /// Whether step() must fill StepOutput::attention and layer_attention. A search that
  /// neither keeps attention nor scores coverage clears it, so a model may skip the
  /// work (the Transformer's head means and per-layer copies); set once, after
  /// initial_state().
  bool want_attention = true;
};

using DecoderStatePtr = std::unique_ptr<DecoderState>;

[[noreturn]] void throw_wrong_state();

/// `state` as the family's own type; nmt::Error if another family made it.
template <typename State>
State& state_as(DecoderState& state) {
  auto* typed = dynamic_cast<State*>(&state);
  if (typed == nullptr) throw_wrong_state();
  return *typed;
}

/// What one decoding step returns.
struct StepOutput {
  NextTokenScores scores;  ///< [B, V] the next token's log-probs up to a constant per row
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

/// One kind of layer of a model (its name, "feed-forward") and what computes its products.
struct LayerComputation {
  std::string layers;
  std::string computation;
};

class Seq2SeqModel : public torch::nn::Module {
 public:
  /// source: [B, S] int64 ids (no bos; eos at the end; pad = 0).
  virtual EncoderOutput encode(const torch::Tensor& source) = 0;
  /// The state before the first target token, one row per sentence of `encoded`.
  virtual DecoderStatePtr initial_state(const EncoderOutput& encoded) = 0;
  /// One step: previous tokens [B] (bos at the first step) -> scores for the next token (StepOutput::scores).
  virtual StepOutput step(const torch::Tensor& previous_tokens, DecoderState& state) = 0;
  /// Teacher forcing. target_input: [B, T] (bos + target without its last token).
  /// Must agree with running step() T times (tested for every family).
  virtual ForwardOutput forward(const torch::Tensor& source, const torch::Tensor& target_input) = 0;
  /// Teacher forcing scored at `positions` only ([N] int64 indices into target_input's B x T
  /// positions, row-major): logits [N, V], row i the scores forward() gives at positions[i].
  /// Training needs no scores at padding (12% of the positions of the Transformer preset's
  /// Multi30k batches); a family that scores positions independently skips the others (the
  /// Transformer: its output projection and the loss run on N rows). By default, forward()'s rows.
  virtual torch::Tensor forward_at(const torch::Tensor& source, const torch::Tensor& target_input,
                                   const torch::Tensor& positions);
  /// Makes step() on `state` score only `columns` ([C] int64 target ids, increasing, on the
  /// model's device) and returns true: StepOutput::scores become [B, C], column c what the
  /// whole vocabulary's scores hold for token columns[c]. What makes a vocabulary
  /// shortlist fast (decoding/vocabulary_part.h). False, `state` untouched, for a family
  /// that scores the whole vocabulary regardless: its caller picks the columns.
  virtual bool score_only(DecoderState& state, const torch::Tensor& columns) { return false; }
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
  virtual SelfAttentionWeights self_attention(const torch::Tensor& source, const torch::Tensor& target_input) {
    (void)source, (void)target_input;
    return {};
  }

  /// How every Linear product of the model is computed (linear_path.h); a built or
  /// loaded model is on fp32_torch, LibTorch's own (differentiable) path.
  LinearPath linear_path() const { return linear_path_; }
  /// Where the model's parameters are (the CPU for a model without any): the device its
  /// paths and kernels were decided for, as --verbose describes them.
  c10::Device device() const;
  /// Puts every Linear layer on `path`, converting the weights it reads (bf16_weights,
  /// int8: once and for good). Everything is converted before anything is replaced, so a
  /// failure leaves the model as it was. nmt::Error for a path the family does not run,
  /// and for any other path once the weights were converted.
  virtual void use_linear_path(LinearPath path);
  /// Each kind of layer of the family and what computes it, for --verbose (describe_compute);
  /// by default one line for all the Linear layers.
  virtual std::vector<LayerComputation> layer_computations() const;
  virtual ~Seq2SeqModel() = default;

 protected:
  /// Whether the family implements `path` (the RNN families: only the fp32-weight paths).
  virtual bool runs_linear_path(LinearPath path) const { return !converts_weights(path); }
  /// Every Linear layer: the registered ones, and any the family keeps unregistered.
  virtual std::vector<LinearImpl*> linear_layers();
  /// After the layers took a converting path: drops what nothing reads any more.
  virtual void after_weights_converted() {}

 private:
  LinearPath linear_path_ = LinearPath::fp32_torch;
};

/// Puts `model` on `path` (one that reads the fp32 weights: fp32_torch, fp32_onednn,
/// bf16_mixed) while it lives, and back on the path it found however the scope ends:
/// the trainer's training mode. nmt::Error for a converting
/// path, or for a model whose weights were converted.
class LinearPathScope {
 public:
  LinearPathScope(Seq2SeqModel& model, LinearPath path);
  ~LinearPathScope();
  LinearPathScope(const LinearPathScope&) = delete;
  LinearPathScope& operator=(const LinearPathScope&) = delete;

 private:
  Seq2SeqModel& model_;
  LinearPath previous_;
};

using ModelPtr = std::shared_ptr<Seq2SeqModel>;

/// True at real tokens. source: [B, S] -> [B, S] bool.
inline torch::Tensor padding_mask(const torch::Tensor& ids) { return ids.ne(0); }

}  // namespace nmt
