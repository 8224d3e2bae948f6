#pragma once
// An fp32 Linear weight packed once into oneDNN's GEMM layout, for inference.
// dnnl_sgemm (onednn_gemm.h) repacks the whole weight matrix at every call before it
// multiplies; with few rows (a decoder step: a beam's hypotheses, a batch's last
// sentences) the packing costs more than the product (at 17 rows, the 8,000-piece output
// projection: 1.04 ms by sgemm, 0.40 ms packed once; bench/RESULTS.md). oneDNN's matmul
// primitive with the weights' layout left to it ("any") and the row count given at each
// call (a run-time dimension) runs the same JIT GEMM over weights packed once.
// The bias is added as sgemm adds it (the product summed onto rows that hold the bias),
// so where both take the same GEMM route (16 rows or more, on the AVX-512 CPUs measured)
// the results are sgemm's to the bit; below that sgemm takes another route, and the last
// bits differ. Like onednn_gemm, oneDNN's C functions come from the libdnnl LibTorch
// loaded (onednn_functions.h), for oneDNN 2.x (Debian 12) and 3.x (Debian 13).
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace nmt {

/// Whether oneDNN's matmul primitive was found (and NMT_FP32_GEMM is not "blas" or
/// "sgemm", which keep the older paths; read once).
bool onednn_packed_weights_enabled();

class OnednnPackedWeight {
 public:
  /// Packs a copy of `weight` ([out, in] fp32 on the CPU) and keeps `bias` ([out] or
  /// undefined): later changes to `weight` are not seen (an InferenceModel packs only
  /// weights that stay fixed: WeightUpdates). nmt::Error where oneDNN refuses (the message
  /// names its status).
  OnednnPackedWeight(const torch::Tensor& weight, const torch::Tensor& bias);
  ~OnednnPackedWeight();
  OnednnPackedWeight(const OnednnPackedWeight&) = delete;
  OnednnPackedWeight& operator=(const OnednnPackedWeight&) = delete;

  /// x W^T + b for x [rows, in] fp32 on the CPU (any rows, 0 included): [rows, out].
  /// Not differentiable.
  torch::Tensor apply(const torch::Tensor& x) const;

  /// oneDNN's name for the implementation it chose ("gemm:jit", ...), for --verbose.
  const std::string& implementation() const { return implementation_; }

 private:
  struct Handles;  // oneDNN's objects, destroyed with this
  std::unique_ptr<Handles> onednn_;
  torch::Tensor bias_;
  int64_t in_, out_;
  std::string implementation_;
};

}  // namespace nmt
