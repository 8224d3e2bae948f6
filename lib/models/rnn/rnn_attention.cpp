#include "nmt/models/rnn/rnn_attention.h"

#include <limits>

#include "nmt/base/error.h"

namespace nmt {

const std::vector<std::string>& RnnAttentionImpl::kinds() {
  static const std::vector<std::string> names = {"bahdanau", "dot", "general", "concat"};
  return names;
}

RnnAttentionImpl::RnnAttentionImpl(const std::string& kind, int64_t query_dim, int64_t memory_dim)
    : kind_(kind) {
  if (kind == "bahdanau" || kind == "concat") {
    // Additive: v^T tanh(W_k h + W_q s). Luong's "concat" is the same form, applied to
    // the current state instead of the previous one.
    key_layer_ = register_module("key_layer", Linear(memory_dim, query_dim, /*with_bias=*/false));
    query_layer_ = register_module("query_layer", Linear(query_dim, query_dim, /*with_bias=*/false));
    energy_layer_ = register_module("energy_layer", Linear(query_dim, 1, /*with_bias=*/false));
  } else if (kind == "general") {
    key_layer_ = register_module("key_layer", Linear(memory_dim, query_dim, /*with_bias=*/false));
  } else if (kind == "dot") {
    if (query_dim != memory_dim) throw Error("dot attention needs equal query and memory sizes");
  } else {
    throw Error("unknown attention kind " + kind);
  }
}

torch::Tensor RnnAttentionImpl::project_keys(const torch::Tensor& memory) {
  return key_layer_ ? key_layer_(memory) : memory;
}

torch::Tensor RnnAttentionImpl::scores(const torch::Tensor& query, const torch::Tensor& keys) {
  if (energy_layer_) {
    // [B, S, Q] + [B, 1, Q] -> [B, S, 1] -> [B, S]
    return energy_layer_(torch::tanh(keys + query_layer_(query).unsqueeze(1))).squeeze(2);
  }
  // dot / general: [B, S, Q] x [B, Q, 1] -> [B, S]
  return torch::bmm(keys, query.unsqueeze(2)).squeeze(2);
}

std::pair<torch::Tensor, torch::Tensor> RnnAttentionImpl::forward(const torch::Tensor& query,
                                                                  const torch::Tensor& keys,
                                                                  const torch::Tensor& memory,
                                                                  const torch::Tensor& mask) {
  const auto masked = scores(query, keys).masked_fill(mask.logical_not(),
                                                      -std::numeric_limits<float>::infinity());
  const auto weights = torch::softmax(masked, -1);
  const auto context = torch::bmm(weights.unsqueeze(1), memory).squeeze(1);  // [B, D]
  return {context, weights};
}

}  // namespace nmt
