#pragma once
// The simpler simple recurrent unit (SSRU; Kim et al. 2019, "From Research to Production and
// Back: Ludicrously Fast Neural Machine Translation"), Marian's `dec-cell: ssru`: the
// decoder's sublayer over its own prefix in place of self-attention
// (model.transformer.decoder_autoreg ssru), as in the Firefox Translations student models.
// Per position t, from the cell c_{t-1} (zeros before the first position):
//   f_t = sigmoid(x_t Wf + bf)
//   c_t = f_t * c_{t-1} + (1 - f_t) * (x_t W)
//   h_t = relu(c_t)
// So a decoding step carries one [B, D] vector per layer instead of a growing key/value
// cache, and costs the same at every position. Marian's src/rnn/cells.h (SSRU) and
// src/models/transformer.h (DecoderLayerRNN) compute it so; its layer-normalized variant is
// not ours.
//
// Shape: batch-first, x [B, T, D] -> [B, T, D]; cell [B, D].
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "nmt/models/linear.h"

namespace nmt {

class SSRUImpl : public torch::nn::Module {
 public:
  explicit SSRUImpl(int64_t d_model);
  /// h for every position of x. `cell`: the state before x's first position (undefined:
  /// zeros), replaced by the state after its last, so steps continue one another; null for a
  /// whole sequence from the start (training).
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor* cell = nullptr);

 private:
  Linear transform_{nullptr};  // W, no bias (Marian's _W)
  Linear forget_{nullptr};     // Wf, bf (Marian's _Wf, _bf)
};
TORCH_MODULE(SSRU);

}  // namespace nmt
