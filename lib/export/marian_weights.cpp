#include "marian_weights.h"

#include "nmt/models/transformer/transformer_layers.h"

namespace nmt {

namespace {

class MarianLinkList {
 public:
  explicit MarianLinkList(int64_t d_model) : d_model_(d_model) {}

  // A Linear: Marian's weight [in, out] and bias [1, out]; rows [first, first + count) of ours.
  void linear(const std::string& weight, const std::string& bias, const std::string& ours, int64_t first = 0,
              int64_t count = -1) {
    links_.push_back({weight, ours + ".weight", MarianLayout::transposed, first, count});
    links_.push_back({bias, ours + ".bias", MarianLayout::row, first, count});
  }

  // Q, K, V from one stacked qkv (self-attention) or query + key_value (cross), then Wo.
  void attention(const std::string& prefix, const std::string& ours, bool stacked_qkv) {
    const std::string kv = stacked_qkv ? ".qkv" : ".key_value";
    const int64_t k_first = stacked_qkv ? d_model_ : 0;
    if (stacked_qkv)
      linear(prefix + "_Wq", prefix + "_bq", ours + ".qkv", 0, d_model_);
    else
      linear(prefix + "_Wq", prefix + "_bq", ours + ".query");
    linear(prefix + "_Wk", prefix + "_bk", ours + kv, k_first, d_model_);
    linear(prefix + "_Wv", prefix + "_bv", ours + kv, k_first + d_model_, d_model_);
    linear(prefix + "_Wo", prefix + "_bo", ours + ".output");
  }

  // A LayerNorm: `prefix`_ln_scale and _ln_bias, with Marian's "_pre" after them for one
  // on a sublayer's input (transformer-preprocess n: layerNorm(x, prefix, "_pre")).
  void norm(const std::string& prefix, const std::string& ours, bool on_input = false) {
    const std::string suffix = on_input ? "_pre" : "";
    links_.push_back({prefix + "_ln_scale" + suffix, ours + ".weight", MarianLayout::row});
    links_.push_back({prefix + "_ln_bias" + suffix, ours + ".bias", MarianLayout::row});
  }

  void add(MarianWeightLink link) { links_.push_back(std::move(link)); }
  std::vector<MarianWeightLink> take() { return std::move(links_); }

 private:
  int64_t d_model_;
  std::vector<MarianWeightLink> links_;
};

void add_marian_layer_links(MarianLinkList& links, const TransformerConfig& config) {
  // Marian names a sublayer's norm after where it sits: post-norm (postProcess) as
  // PREFIX_ln_scale, pre-norm (preProcess) as PREFIX_ln_scale_pre, with the same prefixes but
  // for the SSRU's ("_rnn_ffn" after it, "_rnn" before it).
  const bool pre = uses_pre_norm(config);
  for (int64_t i = 0; i < config.encoder_layers; ++i) {
    const auto prefix = "encoder_l" + std::to_string(i + 1);
    const auto ours = "encoder." + std::to_string(i);
    links.attention(prefix + "_self", ours + ".self_attention", true);
    links.norm(prefix + "_self_Wo", ours + ".attention_norm", pre);
    links.linear(prefix + "_ffn_W1", prefix + "_ffn_b1", ours + ".feed_forward.inner");
    links.linear(prefix + "_ffn_W2", prefix + "_ffn_b2", ours + ".feed_forward.outer");
    links.norm(prefix + "_ffn_ffn", ours + ".feed_forward_norm", pre);
  }
  const bool ssru = decoder_autoregression(config) == DecoderAutoregression::ssru;
  for (int64_t i = 0; i < config.decoder_layers; ++i) {
    const auto prefix = "decoder_l" + std::to_string(i + 1);
    const auto ours = "decoder." + std::to_string(i);
    if (ssru) {
      // Marian's DecoderLayerRNN: the cell's W, Wf, bf under the layer's "_rnn" prefix.
      links.add({prefix + "_rnn_W", ours + ".ssru.transform.weight", MarianLayout::transposed});
      links.linear(prefix + "_rnn_Wf", prefix + "_rnn_bf", ours + ".ssru.forget");
      links.norm(prefix + (pre ? "_rnn" : "_rnn_ffn"), ours + ".ssru_norm", pre);
    } else {
      links.attention(prefix + "_self", ours + ".self_attention", true);
      links.norm(prefix + "_self_Wo", ours + ".self_attention_norm", pre);
    }
    links.attention(prefix + "_context", ours + ".cross_attention", false);
    links.norm(prefix + "_context_Wo", ours + ".cross_attention_norm", pre);
    links.linear(prefix + "_ffn_W1", prefix + "_ffn_b1", ours + ".feed_forward.inner");
    links.linear(prefix + "_ffn_W2", prefix + "_ffn_b2", ours + ".feed_forward.outer");
    links.norm(prefix + "_ffn_ffn", ours + ".feed_forward_norm", pre);
  }
  if (pre) {  // each stack's final norm (transformer-postprocess-top n)
    links.norm("encoder_top", "encoder_norm");
    links.norm("decoder_top", "decoder_norm");
  }
}

}  // namespace

std::vector<MarianWeightLink> marian_weight_links(const TransformerConfig& config) {
  MarianLinkList links(config.d_model);
  // Marian's tying options name the embeddings: one Wemb when shared (tied-embeddings-src or
  // -all), else encoder_Wemb and decoder_Wemb; the output layer is Wemb (or decoder_Wemb)
  // transposed when tied, else decoder_ff_logit_out_W.
  if (config.share_embeddings) {
    links.add({"Wemb", "embedding.weight", MarianLayout::same, 0, -1, VocabularyAxis::target});
  } else {
    links.add({"encoder_Wemb", "source_embedding.weight", MarianLayout::same, 0, -1, VocabularyAxis::source});
    links.add({"decoder_Wemb", "target_embedding.weight", MarianLayout::same, 0, -1, VocabularyAxis::target});
  }
  if (!config.tie_output)
    links.add({"decoder_ff_logit_out_W", "output_weight", MarianLayout::transposed, 0, -1, VocabularyAxis::target});
  if (config.output_bias)
    links.add({"decoder_ff_logit_out_b", "output_bias", MarianLayout::row, 0, -1, VocabularyAxis::target});
  add_marian_layer_links(links, config);
  return links.take();
}

}  // namespace nmt
