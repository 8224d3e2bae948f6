#pragma once
// fp32 matrix products through oneDNN's sgemm: training's products on AVX-512, validation,
// and inference where the packed weights (onednn_packed_weight.h) are not available.
// LibTorch 1.13 sends fp32 products to the BLAS (OpenBLAS here) and only bf16 ones to
// oneDNN. At the decoder's shapes ([rows, 256] by [256, {256, 768, 1024, 8000}]) oneDNN's
// AVX-512 sgemm measured faster than OpenBLAS (bench/RESULTS.md). libdnnl is loaded anyway
// (libtorch_cpu needs it), so its C entry point is found at run time: no headers, no link
// dependency, and a LibTorch without it falls back to the BLAS.
// The sum is taken in a different order than OpenBLAS's, so results differ in the last
// bits; NMT_FP32_GEMM=blas restores the BLAS (and outputs identical to older builds).
#include <torch/types.h>

namespace nmt {

/// Whether fp32 inference products go through oneDNN: its sgemm was found and
/// NMT_FP32_GEMM is not "blas" (read once).
bool onednn_fp32_gemm_enabled();

/// How many products onednn_linear has computed in this process (tests check the
/// dispatch with it: oneDNN's and OpenBLAS's results can be bit-identical).
int64_t onednn_linear_calls();

/// The [rows, out] output both oneDNN products write into: a fresh buffer holding `bias`
/// in every row, which the product is then summed onto (sgemm's beta 1; the packed
/// matmul's sum post-op), so that both round alike; uninitialised without a bias.
torch::Tensor output_rows_with_bias(const torch::Tensor& bias, int64_t rows, int64_t out,
                                    const torch::TensorOptions& options);

/// x W^T + b through dnnl_sgemm. x: [N, in] fp32 on the CPU; weight: [out, in] fp32;
/// bias: [out] or undefined. Not differentiable: for inference only (the caller checks).
/// Requires onednn_fp32_gemm_enabled().
torch::Tensor onednn_linear(const torch::Tensor& x, const torch::Tensor& weight,
                            const torch::Tensor& bias);

/// op(a) op(b) through dnnl_sgemm, where op transposes when asked: a and b 2-D fp32 on
/// the CPU (made contiguous). The three products of a Linear layer in training are
/// (x, w^T), (grad_y, w) and (grad_y^T, x). Requires onednn_fp32_gemm_enabled().
torch::Tensor onednn_matmul(const torch::Tensor& a, bool transpose_a, const torch::Tensor& b, bool transpose_b);

}  // namespace nmt
