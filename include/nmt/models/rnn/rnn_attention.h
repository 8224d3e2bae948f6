#pragma once
// Attention for the RNN decoder: Bahdanau (additive MLP) and Luong's dot, general and
// concat scores. Keys are projected once per sentence (project_keys) and reused at
// every step; only the query changes.
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <string>
#include <vector>

#include "nmt/models/linear.h"

namespace nmt {

class RnnAttentionImpl : public torch::nn::Module {
 public:
  /// kind: bahdanau | dot | general | concat. memory_dim must equal query_dim for dot.
  RnnAttentionImpl(const std::string& kind, int64_t query_dim, int64_t memory_dim);
  /// Shape: memory [B, S, D] -> keys [B, S, K] (K depends on the kind).
  torch::Tensor project_keys(const torch::Tensor& memory);
  /// Shape: query [B, Q], keys [B, S, K], memory [B, S, D], mask [B, S] bool
  /// -> context [B, D], weights [B, S] (zero at padding, rows sum to 1).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& query, const torch::Tensor& keys,
                                                  const torch::Tensor& memory, const torch::Tensor& mask);
  /// The kinds the constructor accepts.
  static const std::vector<std::string>& kinds();
  /// Bahdanau attends with the previous decoder state; Luong's kinds with the current one.
  bool uses_previous_state() const { return kind_ == "bahdanau"; }

 private:
  torch::Tensor scores(const torch::Tensor& query, const torch::Tensor& keys);

  std::string kind_;
  Linear key_layer_{nullptr};     // additive (bahdanau, concat), general
  Linear query_layer_{nullptr};   // additive
  Linear energy_layer_{nullptr};  // additive: v^T tanh(.)
};
TORCH_MODULE(RnnAttention);

}  // namespace nmt
