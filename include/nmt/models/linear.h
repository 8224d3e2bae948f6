#pragma once
// The Linear layer of every model family: x W^T + b on the path the model set
// (linear_path.h), with the weight held in the form that path reads. Its forward is a
// switch on the stored path; nothing is decided at the call.
//  - fp32_torch, fp32_onednn, bf16_mixed: the fp32 parameters "weight" and "bias", named
//    and initialised as torch::nn::Linear's, so every checkpoint loads as before.
//  - fp32_packed: the same parameters, and a packed copy of the weight that the products
//    read (OnednnPackedWeight), made when the path is taken and dropped when it is left.
//  - bf16_weights: the same parameters, converted to bf16 in place; where oneDNN runs the
//    bf16 matmul on AMX, also a packed copy the products read (OnednnAmxWeight).
//  - int8: the buffers "weight_int8" and "weight_scales" (Int8Weight, with its packed copy
//    where AMX runs the int8 product); the fp32 "weight"
//    parameter is gone, so nothing can read it by mistake. The bias stays fp32.
// A layer over a weight another module registered (the Transformer's output projection:
// the target embedding when tied) registers no parameter; converted, it keeps its own
// copy in a buffer ("weight_bf16", or the int8 ones) and leaves the owner's tensor alone.
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <memory>

#include "nmt/models/int8_linear.h"
#include "nmt/models/linear_path.h"
#include "nmt/models/onednn_amx_weight.h"
#include "nmt/models/onednn_packed_weight.h"

namespace nmt {

/// x W^T + b for a 2-D x [N, in] and an fp32 weight [out, in] (bias [out] or undefined)
/// on a path that reads fp32 weights (fp32_torch, fp32_onednn, bf16_mixed); the result
/// has x's dtype. What a Linear layer runs on those paths, and the GRU cells' products
/// (on fp32_packed too: their weights are not packed, and oneDNN's sgemm computes them).
/// Differentiable on each of them (fp32_onednn's backward products are oneDNN's too).
/// nmt::Error on a converting path.
torch::Tensor fp32_weight_linear(LinearPath path, const torch::Tensor& x, const torch::Tensor& weight,
                                 const torch::Tensor& bias);

class LinearImpl : public torch::nn::Module {
 public:
  /// Its own parameters, initialised as torch::nn::Linear(in, out) does (same random draws).
  LinearImpl(int64_t in, int64_t out, bool with_bias = true);
  /// Over `shared_weight` [out, in] and `shared_bias` [out] (or none), registered by another module.
  explicit LinearImpl(torch::Tensor shared_weight, torch::Tensor shared_bias = {});

  /// Shape: [..., in] -> [..., out], through a single GEMM that adds the bias (LibTorch
  /// 1.13 runs a Linear on a 3-D input as matmul plus a separate bias pass).
  torch::Tensor forward(const torch::Tensor& x);

  LinearPath path() const { return path_; }

  /// The weights `path` reads, computed from the current ones without changing this layer
  /// (empty for a path that reads the fp32 weights).
  struct Converted {
    torch::Tensor weight;  // bf16
    torch::Tensor bias;    // bf16 (bf16_weights with a bias)
    Int8Weight int8;
    std::shared_ptr<const OnednnPackedWeight> packed;  // fp32_packed
    std::shared_ptr<const OnednnAmxWeight> amx;        // bf16_weights where AMX runs it
  };
  Converted convert_for(LinearPath path) const;
  /// Takes `path` with what convert_for(path) returned. nmt::Error once converted.
  void use_path(LinearPath path, Converted converted);

  /// A layer that computes only the outputs `rows` ([C] int64 indices into out, on the
  /// weights' device): x W[rows]^T + b[rows], on this layer's path, over copies of those
  /// rows of its weights in the form the path reads (int8: the values, their per-row
  /// scales and compensation). For inference: the copies are made without gradients.
  /// Each output is the one this layer computes for that row (a vocabulary shortlist's
  /// output projection, decoding/vocabulary_part.h).
  std::shared_ptr<LinearImpl> output_rows(const torch::Tensor& rows) const;

  /// fp32 (bf16 on bf16_weights); undefined on int8. Public like torch::nn::Linear's, for
  /// initialisation and tests.
  torch::Tensor weight;
  torch::Tensor bias;

 private:
  torch::Tensor product(const torch::Tensor& x) const;
  torch::Tensor packed_product(const torch::Tensor& x) const;

  LinearPath path_ = LinearPath::fp32_torch;
  bool owns_weight_;
  Int8Weight int8_;
  std::shared_ptr<const OnednnPackedWeight> packed_;  // on fp32_packed only
  std::shared_ptr<const OnednnAmxWeight> amx_;        // on bf16_weights where AMX runs it
};
TORCH_MODULE(Linear);

}  // namespace nmt
