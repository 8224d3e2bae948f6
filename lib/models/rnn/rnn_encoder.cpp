#include "nmt/models/rnn/rnn_encoder.h"

#include <torch/nn/utils/rnn.h>

#include "nmt/base/error.h"

namespace nmt {

void validate_rnn_sizes(const RnnConfig& config) {
  if (config.embedding_dim <= 0 || config.hidden_dim <= 0 || config.layers <= 0)
    throw Error("invalid config: model.rnn.embedding_dim, hidden_dim and layers must be positive");
}

RnnEncoderImpl::RnnEncoderImpl(int64_t vocab, int64_t embedding_dim, int64_t hidden_dim,
                               int64_t layers, bool bidirectional, double dropout)
    : layers_(layers), directions_(bidirectional ? 2 : 1) {
  embedding_ = register_module(
      "embedding", torch::nn::Embedding(torch::nn::EmbeddingOptions(vocab, embedding_dim).padding_idx(0)));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
  gru_ = register_module("gru", torch::nn::GRU(torch::nn::GRUOptions(embedding_dim, hidden_dim)
                                                   .num_layers(layers)
                                                   .batch_first(true)
                                                   .bidirectional(bidirectional)
                                                   .dropout(layers > 1 ? dropout : 0.0)));
}

RnnEncoderOutput RnnEncoderImpl::forward(const torch::Tensor& source) {
  namespace rnn = torch::nn::utils::rnn;
  const auto lengths = source.ne(0).sum(1).to(torch::kCPU);
  const auto embedded = dropout_(embedding_(source));
  // Packing: every sentence's final state is taken at its own last token, so a sentence
  // gives the same result alone or padded in a batch.
  auto packed = rnn::pack_padded_sequence(embedded, lengths, /*batch_first=*/true,
                                          /*enforce_sorted=*/false);
  auto [packed_states, hidden] = gru_->forward_with_packed_input(packed);
  auto states = std::get<0>(rnn::pad_packed_sequence(packed_states, /*batch_first=*/true,
                                                      /*padding_value=*/0.0, source.size(1)));
  // hidden: [layers * dirs, B, H]; the top layer's directions are the last `dirs` rows.
  auto top = hidden.narrow(0, (layers_ - 1) * directions_, directions_);
  auto final = top.transpose(0, 1).reshape({source.size(0), -1});
  return {states, final};
}

EncoderOutput RnnEncoderImpl::encode(const torch::Tensor& source) {
  auto encoded = forward(source);
  EncoderOutput output;
  output.memory = encoded.states;
  output.source_mask = padding_mask(source);
  output.final_states = encoded.final;
  return output;
}

}  // namespace nmt
