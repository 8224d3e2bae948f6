#pragma once
// Building blocks of the Transformer stacks (Vaswani et al. 2017, sec. 3.1-3.5):
// position-wise feed-forward network, encoder layer, decoder layer, sinusoidal
// positional encoding.
//
// Every sublayer is wrapped in a residual connection with LayerNorm, either
//   post-norm (the paper):  x = LayerNorm(x + Dropout(Sublayer(x)))
//   pre-norm (more stable): x = x + Dropout(Sublayer(LayerNorm(x)))
// or pre-norm as Marian computed it before version 1.11, where a self-attention sublayer
// takes its queries from LayerNorm(x) but its keys and values from x itself
// (src/models/transformer.h, LayerAttention; Marian 1.11 normalizes all three when training).
// With pre-norm the stack's output is un-normalised, so the model adds a final
// LayerNorm after each stack.
//
// Shape: batch-first, x [B, T, D].
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "nmt/base/config.h"
#include "nmt/models/transformer/multi_head_attention.h"
#include "nmt/models/transformer/ssru.h"
#include "nmt/models/transformer/transformer_config.h"

namespace nmt {

/// Where each sublayer's LayerNorm sits (model.transformer.norm).
enum class NormPlacement {
  post,       ///< "post": after the residual sum (the paper, Marian's default)
  pre,        ///< "pre": on the sublayer's input, for queries, keys and values alike
  pre_query,  ///< "pre_query": as pre, but self-attention normalizes only its queries (Marian < 1.11)
};
/// model.transformer.norm; throws nmt::Error for an unknown name.
NormPlacement norm_placement(const TransformerConfig& config);
/// True for either pre-norm (each stack then ends with a LayerNorm), false for post-norm;
/// throws nmt::Error for an unknown name.
bool uses_pre_norm(const TransformerConfig& config);

/// How the sinusoids of model.transformer.positions are laid out.
enum class PositionLayout {
  interleaved,   ///< PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(the same)
  concatenated,  ///< PE(pos, i) = sin(pos / 10000^(i/(D/2-1))), PE(pos, D/2+i) = cos(the same)
};
/// model.transformer.positions; throws nmt::Error for an unknown name, and for concatenated
/// with an odd d_model (its halves would not be equal).
PositionLayout position_layout(const TransformerConfig& config);

/// true for model.transformer.decoder_start "zeros", false for "bos"; throws for anything else.
bool decoder_starts_from_zeros(const TransformerConfig& config);

/// The decoder's sublayer over its own prefix (model.transformer.decoder_autoreg).
enum class DecoderAutoregression {
  self_attention,  ///< masked self-attention, a key/value cache when decoding (the paper)
  ssru,            ///< the SSRU recurrence (ssru.h), one cell vector per layer when decoding
};
/// model.transformer.decoder_autoreg; throws nmt::Error for an unknown name.
DecoderAutoregression decoder_autoregression(const TransformerConfig& config);

enum class FeedForwardActivation { relu, swish };
/// model.transformer.ffn_activation; throws nmt::Error for an unknown name.
FeedForwardActivation feed_forward_activation(const TransformerConfig& config);

/// The sinusoidal positional encoding in `layout`. Shape: -> [positions, dim] float.
/// concatenated is computed in float as Marian computes it, so that a Marian model's
/// positions are the ones it was trained with.
torch::Tensor sinusoidal_positions(int64_t positions, int64_t dim, PositionLayout layout = PositionLayout::interleaved);

/// A LayerNorm over d_model with the model's epsilon.
torch::nn::LayerNorm transformer_layer_norm(const TransformerConfig& config);

/// FFN(x) = act(x W1 + b1) W2 + b2, act relu or swish. Shape: [B, T, D] -> [B, T, D].
/// No dropout inside: the paper applies dropout only to sublayer outputs. On a bf16 path
/// the hidden layer stays bf16 between the two products.
class FeedForwardImpl : public torch::nn::Module {
 public:
  FeedForwardImpl(int64_t d_model, int64_t inner_dim, FeedForwardActivation activation = FeedForwardActivation::relu);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  Linear inner_{nullptr};
  Linear outer_{nullptr};
  FeedForwardActivation activation_;
};
TORCH_MODULE(FeedForward);

/// Residual wrapping shared by both layer types: owns the norm-placement choice and
/// the residual dropout.
class ResidualBlock {
 public:
  ResidualBlock(NormPlacement placement, double dropout) : placement_(placement), dropout_(dropout) {}

  /// The dropout kernel, set with the model's other kernels (TransformerModel), not per call.
  void use_dropout_kernel(KernelChoice kernel) { dropout_kernel_ = kernel; }

  /// Runs `sublayer` (Tensor -> Tensor) with the residual connection and `norm`: the
  /// self-attention case below with one input (keys and values from it are not asked for).
  template <class Sublayer>
  torch::Tensor apply(const torch::Tensor& x, torch::nn::LayerNorm& norm, bool training,
                      Sublayer&& sublayer) const {
    return apply_self_attention(x, norm, training,
                                [&](const torch::Tensor& input, const torch::Tensor&) { return sublayer(input); });
  }

  /// As apply, for self-attention: `sublayer` (queries from, keys and values from) -> Tensor
  /// gets the two inputs the placement gives it (x and x; LayerNorm(x) twice; or LayerNorm(x)
  /// and x with pre_query). The same tensor twice when they are equal.
  template <class Sublayer>
  torch::Tensor apply_self_attention(const torch::Tensor& x, torch::nn::LayerNorm& norm, bool training,
                                     Sublayer&& sublayer) const {
    if (placement_ == NormPlacement::post) return norm(x + drop(sublayer(x, x), training));
    const auto normalized = norm(x);
    const auto& keys_values_from = placement_ == NormPlacement::pre_query ? x : normalized;
    return x + drop(sublayer(normalized, keys_values_from), training);
  }

 private:
  torch::Tensor drop(const torch::Tensor& x, bool training) const;

  NormPlacement placement_;
  double dropout_;
  KernelChoice dropout_kernel_ = KernelChoice::cpu_fp32;  // a model is built in fp32 on the CPU
};

/// Self-attention over the source, then the FFN.
class EncoderLayerImpl : public torch::nn::Module {
 public:
  void use_dropout_kernel(KernelChoice kernel) { residual_.use_dropout_kernel(kernel); }
  EncoderLayerImpl(const TransformerConfig& config, double dropout);
  /// Shape: x [B, S, D], source_bias [B, 1, 1, S] -> [B, S, D]. With `weights`, the
  /// self-attention weights [B, H, S, S] are stored there (attention export).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& source_bias,
                        torch::Tensor* weights = nullptr);

 private:
  ResidualBlock residual_;
  SelfAttention self_attention_{nullptr};
  FeedForward feed_forward_{nullptr};
  torch::nn::LayerNorm attention_norm_{nullptr};
  torch::nn::LayerNorm feed_forward_norm_{nullptr};
};
TORCH_MODULE(EncoderLayer);

struct DecoderLayerOutput {
  torch::Tensor output;         ///< [B, T, D]
  torch::Tensor cross_weights;  ///< [B, H, T, S] encoder-decoder attention
  torch::Tensor self_weights;   ///< [B, H, T, Tk] masked self-attention (undefined with SSRU)
};

/// What a decoding step carries for one layer's sublayer over the prefix: a self-attention
/// layer's cache, or an SSRU layer's cell [B, D] (undefined before the first step). Neither
/// when the whole target is given (training, teacher forcing).
struct DecoderLayerStepState {
  KeyValueCache* self_attention = nullptr;
  torch::Tensor* recurrent_cell = nullptr;
};

/// Masked self-attention (or the SSRU, model.transformer.decoder_autoreg), encoder-decoder
/// attention, then the FFN.
class DecoderLayerImpl : public torch::nn::Module {
 public:
  void use_dropout_kernel(KernelChoice kernel) { residual_.use_dropout_kernel(kernel); }
  DecoderLayerImpl(const TransformerConfig& config, double dropout);
  /// This layer's cross-attention keys/values; computed once per source sentence.
  /// Shape: memory [B, S, D] -> [B, H, S, dk] each.
  KeyValue project_memory(const torch::Tensor& memory);
  /// Shape: x [B, T, D]; self_bias broadcastable to [B, H, T, T] (causal, or undefined
  /// when decoding one step against a cache; SSRU layers do not read it); memory
  /// [B, H, S, dk]; memory_bias [B, 1, 1, S]. With `step`, self-attention keys/values are
  /// appended to its cache, or the SSRU continues from its cell and leaves the new one there.
  DecoderLayerOutput forward(const torch::Tensor& x, const torch::Tensor& self_bias,
                             const KeyValue& memory, const torch::Tensor& memory_bias,
                             DecoderLayerStepState step = {});

 private:
  ResidualBlock residual_;
  SelfAttention self_attention_{nullptr};  // one of these two, as decoder_autoreg says
  SSRU ssru_{nullptr};
  CrossAttention cross_attention_{nullptr};
  FeedForward feed_forward_{nullptr};
  torch::nn::LayerNorm self_attention_norm_{nullptr};  // after either (named ssru_norm with SSRU)
  torch::nn::LayerNorm cross_attention_norm_{nullptr};
  torch::nn::LayerNorm feed_forward_norm_{nullptr};
};
TORCH_MODULE(DecoderLayer);

}  // namespace nmt
