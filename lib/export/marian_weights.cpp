#include "nmt/export/marian_weights.h"

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

  // A sublayer's LayerNorm, after the residual sum (post-norm).
  void norm(const std::string& prefix, const std::string& ours) {
    links_.push_back({prefix + "_ln_scale", ours + ".weight", MarianLayout::row});
    links_.push_back({prefix + "_ln_bias", ours + ".bias", MarianLayout::row});
  }

  void add(MarianWeightLink link) { links_.push_back(std::move(link)); }
  std::vector<MarianWeightLink> take() { return std::move(links_); }

 private:
  int64_t d_model_;
  std::vector<MarianWeightLink> links_;
};

void add_marian_layer_links(MarianLinkList& links, const TransformerConfig& config) {
  for (int64_t i = 0; i < config.encoder_layers; ++i) {
    const auto prefix = "encoder_l" + std::to_string(i + 1);
    const auto ours = "encoder." + std::to_string(i);
    links.attention(prefix + "_self", ours + ".self_attention", true);
    links.norm(prefix + "_self_Wo", ours + ".attention_norm");
    links.linear(prefix + "_ffn_W1", prefix + "_ffn_b1", ours + ".feed_forward.inner");
    links.linear(prefix + "_ffn_W2", prefix + "_ffn_b2", ours + ".feed_forward.outer");
    links.norm(prefix + "_ffn_ffn", ours + ".feed_forward_norm");
  }
  const bool ssru = decoder_autoregression(config) == DecoderAutoregression::ssru;
  for (int64_t i = 0; i < config.decoder_layers; ++i) {
    const auto prefix = "decoder_l" + std::to_string(i + 1);
    const auto ours = "decoder." + std::to_string(i);
    if (ssru) {
      // Marian's DecoderLayerRNN: the cell's W, Wf, bf under the layer's "_rnn" prefix, its
      // post-norm named as if after a feed-forward ("_rnn_ffn").
      links.add({prefix + "_rnn_W", ours + ".ssru.transform.weight", MarianLayout::transposed});
      links.linear(prefix + "_rnn_Wf", prefix + "_rnn_bf", ours + ".ssru.forget");
      links.norm(prefix + "_rnn_ffn", ours + ".ssru_norm");
    } else {
      links.attention(prefix + "_self", ours + ".self_attention", true);
      links.norm(prefix + "_self_Wo", ours + ".self_attention_norm");
    }
    links.attention(prefix + "_context", ours + ".cross_attention", false);
    links.norm(prefix + "_context_Wo", ours + ".cross_attention_norm");
    links.linear(prefix + "_ffn_W1", prefix + "_ffn_b1", ours + ".feed_forward.inner");
    links.linear(prefix + "_ffn_W2", prefix + "_ffn_b2", ours + ".feed_forward.outer");
    links.norm(prefix + "_ffn_ffn", ours + ".feed_forward_norm");
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
