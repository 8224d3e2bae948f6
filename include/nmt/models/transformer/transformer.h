#pragma once
// The Transformer (Vaswani et al. 2017, "Attention Is All You Need"): an encoder stack
// of self-attention + FFN layers, a decoder stack of masked self-attention +
// encoder-decoder attention + FFN layers, sinusoidal positions, embeddings scaled by
// sqrt(d_model). Norm placement (pre/post), embedding sharing and output tying follow
// ModelConfig. Token ids: pad 0, bos 2, eos 3.
//
// Decoding is incremental: initial_state() projects every layer's cross-attention
// keys/values once per sentence (TransformerState::memory), and each step() writes one
// position into the self-attention caches (TransformerState::self_attention), or moves
// each SSRU layer's cell one position on (TransformerState::recurrent_cells), so the
// prefix is never re-run.
//
// Shape: batch-first; source [B, S], target [B, T], memory [B, S, D], logits [B, T, V].
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include <memory>
#include <string>
#include <vector>

#include "nmt/base/config.h"
#include "nmt/models/model.h"
#include "nmt/models/registry.h"
#include "nmt/models/transformer/self_attention_caches.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/models/transformer/transformer_layers.h"

namespace nmt {

/// The registry entry: name "transformer", its settings check and constructor.
ModelFamily transformer_family();

/// What the decoder carries between steps. What a sentence's hypotheses share is kept
/// once per sentence and read through sentence_rows, so expanding to a beam or dropping
/// a finished sentence re-indexes instead of copying it.
struct TransformerState : DecoderState {
  std::vector<KeyValue> memory;   ///< per decoder layer: encoder keys/values [N, H, S, dk]
  torch::Tensor source_bias;      ///< [N, 1, 1, S] additive padding mask
  torch::Tensor sentence_rows;    ///< [B] int64: the sentence of each hypothesis (undefined: row b)
  SelfAttentionCaches self_attention;        ///< self-attention decoders (none for SSRU)
  std::vector<torch::Tensor> recurrent_cells;  ///< SSRU decoders: per layer [B, D] (undefined: zeros)
  /// The output projection's rows of the columns score_only() chose (null: every row);
  /// shared by clones, never written after score_only().
  std::shared_ptr<LinearImpl> output_rows;

  void reorder(const torch::Tensor& index) override;
  void select(const torch::Tensor& index) override;
  DecoderStatePtr clone() const override { return std::make_unique<TransformerState>(*this); }
};

class TransformerModel : public Seq2SeqModel {
 public:
  /// Throws nmt::Error for inconsistent settings (share_embeddings with different
  /// vocabulary sizes, d_model not divisible by heads, unknown norm, ...).
  explicit TransformerModel(const ModelConfig& config);

  /// memory [B, S, D]; source_mask [B, S]; source_bias [B, 1, 1, S] additive mask.
  EncoderOutput encode(const torch::Tensor& source) override;
  /// A TransformerState with one row per sentence and empty caches.
  DecoderStatePtr initial_state(const EncoderOutput& encoded) override;
  /// previous_tokens [B] -> log_probs [B, V], attention [B, S], layer_attention L x [B, H, S].
  StepOutput step(const torch::Tensor& previous_tokens, DecoderState& state) override;
  /// The output projection's rows of `columns`, kept in the state: each step's product
  /// is [B, C] instead of [B, V].
  bool score_only(DecoderState& state, const torch::Tensor& columns) override;
  /// source [B, S], target_input [B, T] -> logits [B, T, V], in one causal pass.
  ForwardOutput forward(const torch::Tensor& source, const torch::Tensor& target_input) override;
  /// The decoder's states at every position, then the output projection at `positions` only.
  torch::Tensor forward_at(const torch::Tensor& source, const torch::Tensor& target_input,
                           const torch::Tensor& positions) override;
  SelfAttentionWeights self_attention(const torch::Tensor& source, const torch::Tensor& target_input) override;

  /// Attention projections, feed-forward, output projection: the model's Linear path;
  /// attention itself, embeddings and layer norms: fp32.
  std::vector<LayerComputation> layer_computations() const override;

  int64_t attention_layers() const override { return settings_.decoder_layers; }
  bool has_self_attention() const override { return true; }  // the encoder's (and the decoder's, without SSRU)
  int64_t max_positions() const override { return settings_.max_positions; }
  /// Decoder layer whose head-mean cross-attention is StepOutput::attention.
  int64_t alignment_layer() const override { return alignment_layer_; }

  /// Puts the Linear layers on `path` (Seq2SeqModel), and decides attention's kernels for the
  /// model as it is now: set up once, with the path, not at each call.
  void use_linear_path(LinearPath path) override;
  /// Moves or casts the model, then decides attention's kernels again.
  void to(torch::Device device, torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Device device, bool non_blocking = false) override;
  /// The kernels of attention (multi_head_attention.h) and of dropout (embeddings,
  /// residuals, attention weights): one decision, kernel_choice_for the model's
  /// activations; cpu_fp32 as built.
  KernelChoice kernels() const { return kernels_; }

  const ModelConfig& config() const { return config_; }
  const torch::nn::Embedding& source_embedding() const { return source_embedding_; }
  const torch::nn::Embedding& target_embedding() const { return target_embedding_; }
  /// [V, D] fp32: the target embedding's weight when tie_output, else its own parameter
  /// (then undefined once converted for bf16 or int8: the output projection keeps the
  /// converted copy).
  torch::Tensor output_weight() const;

 protected:
  bool runs_linear_path(LinearPath) const override { return true; }
  std::vector<LinearImpl*> linear_layers() override;
  void after_weights_converted() override;

 private:
  /// kernel_choice_for the model's activations (its positions' dtype and device), given to
  /// every attention module and layer.
  void decide_kernels();
  void build_embeddings();
  void build_stacks();
  /// Scaled embedding + positions [offset, offset + T) + dropout. ids [B, T] -> [B, T, D].
  /// With zero_first_position, position 0's embedding (not its sinusoid) is zero.
  torch::Tensor embed(const torch::nn::Embedding& embedding, const torch::Tensor& ids,
                      int64_t offset, bool zero_first_position = false);
  /// embed() of the target side; position 0 a zero embedding where decoder_start is zeros.
  torch::Tensor embed_target(const torch::Tensor& ids, int64_t offset);
  /// Final norm (pre-norm only) and output projection. [..., D] -> [..., V].
  torch::Tensor project_output(const torch::Tensor& x);
  /// The same through `rows` (TransformerState::output_rows) where it is set.
  torch::Tensor project_output(const torch::Tensor& x, const std::shared_ptr<LinearImpl>& rows);
  /// The last decoder layer's output under teacher forcing, [B, T, D], before project_output.
  torch::Tensor decoder_states(const torch::Tensor& source, const torch::Tensor& target_input);

  ModelConfig config_;
  TransformerConfig settings_;  ///< config_'s model.transformer, read once
  int64_t alignment_layer_;
  bool decoder_starts_from_zeros_ = false;  // model.transformer.decoder_start, decided at construction
  bool recurrent_decoder_ = false;          // model.transformer.decoder_autoreg ssru, likewise
  KernelChoice kernels_ = KernelChoice::cpu_fp32;
  torch::nn::Embedding source_embedding_{nullptr};
  torch::nn::Embedding target_embedding_{nullptr};
  torch::Tensor output_weight_;  // undefined when tied
  torch::Tensor output_bias_;    // [V]; undefined without model.transformer.output_bias
  // Over output_weight(), registered by the model (old checkpoints name it
  // "output_weight") or by the tied embedding, so not registered itself.
  Linear output_projection_{nullptr};
  torch::Tensor positions_;      // buffer [max_positions, D]
  torch::nn::ModuleList encoder_{nullptr};
  torch::nn::ModuleList decoder_{nullptr};
  std::vector<EncoderLayer> encoder_layers_;  // typed views of encoder_'s entries
  std::vector<DecoderLayer> decoder_layers_;
  torch::nn::LayerNorm encoder_norm_{nullptr};  // pre-norm only
  torch::nn::LayerNorm decoder_norm_{nullptr};
};

}  // namespace nmt
