#pragma once
// An fp32 Linear weight packed once into oneDNN's GEMM layout, for inference.
// dnnl_sgemm (onednn_gemm.h) repacks the whole weight matrix at every call before it
// multiplies; with few rows (a decoder step: a beam's hypotheses, a batch's last
// sentences) the packing costs more than the product. oneDNN's matmul primitive with the
// weights' layout left to it ("any") and the row count given at each call (a run-time
// dimension) runs the same JIT GEMM over weights packed once. Where packing pays was
// measured per row count (bench/RESULTS.md, 2026-12-07, Zen 5): from 16 rows to 1,024 the
// packed product took 0.13-0.9x sgemm's time; below 16 rows sgemm takes a route of its own
// that is as fast (up to 2x faster for narrow weights), except for wide weights (the
// vocabulary projection: 0.4x at 5 rows); above 1,024 rows sgemm's packing is paid for
// and it was up to 1.09x faster. So apply takes the packed product in that window and
// sgemm outside it.
// The bias is added as sgemm adds it (the product summed onto rows that hold the bias),
// so where both take the same GEMM route the results are sgemm's to the bit (16 rows or
// more, 2 threads, on the AVX-512 CPU measured). Like onednn_gemm, oneDNN's C functions
// come from the libdnnl LibTorch loaded (onednn_functions.h), for oneDNN 2.x (Debian 12)
// and 3.x (Debian 13).
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace nmt {

/// Whether oneDNN's matmul primitive was found (and NMT_FP32_GEMM is not "blas" or
/// "sgemm", which keep the older paths; read once).
bool onednn_packed_weights_enabled();

/// The row counts that read the packed weight, for --verbose ("16 to 1,024 rows ...").
std::string describe_packed_rows();

class OnednnPackedWeight {
 public:
  /// Packs `weight` ([out, in] fp32 on the CPU) and keeps it and `bias` ([out] or
  /// undefined) for the row counts sgemm computes. Both must stay fixed: a change would
  /// reach only those rows (an InferenceModel packs only weights that stay fixed:
  /// WeightUpdates). nmt::Error where oneDNN refuses (the message names its status).
  OnednnPackedWeight(const torch::Tensor& weight, const torch::Tensor& bias);
  ~OnednnPackedWeight();
  OnednnPackedWeight(const OnednnPackedWeight&) = delete;
  OnednnPackedWeight& operator=(const OnednnPackedWeight&) = delete;

  /// x W^T + b for x [rows, in] fp32 on the CPU (any rows, 0 included): [rows, out];
  /// through the packed weight where `packs_for(rows)`, else through sgemm.
  /// Not differentiable.
  torch::Tensor apply(const torch::Tensor& x) const;

  /// Whether a product of `rows` rows reads the packed weight (the window above).
  bool packs_for(int64_t rows) const;

  /// oneDNN's name for the implementation it chose ("gemm:jit", ...), for --verbose.
  const std::string& implementation() const { return implementation_; }

 private:
  struct Handles;  // oneDNN's objects, destroyed with this
  std::unique_ptr<Handles> onednn_;
  torch::Tensor weight_, bias_;
  int64_t in_, out_;
  std::string implementation_;
};

}  // namespace nmt
