#pragma once
// Dynamic int8 Linear layers for inference (--precision int8), through oneDNN's
// s8 x s8 -> s32 GEMM:
//  - weights: symmetric per-output-row int8, quantized once (a LibTorch kQInt8
//    per-channel tensor, which carries its own scales), onto -127..127 where the CPU has
//    AVX512-VNNI and onto -63..63 elsewhere (AVX2's 16-bit intermediate sums saturate
//    with wider weights: int8_linear.cpp);
//  - inputs: symmetric per-row int8, quantized at every call from the row's max |x|;
//  - the int32 sums are scaled back to fp32 and the fp32 bias added.
// The fp32 weights stay registered as the module's parameters (a quantized tensor cannot
// replace a parameter's data), so int8 saves no memory; it is for speed.
// LibTorch's own dynamic quantized Linear needs FBGEMM, which Debian's build lacks.
#include <torch/types.h>

namespace nmt {

/// Whether oneDNN's int8 GEMM (dnnl_gemm_s8s8s32) was found in the loaded libdnnl.
bool onednn_int8_gemm_available();

/// weight [out, in] fp32 -> kQInt8 per-channel (axis 0) with scale max|row| / 127
/// (AVX512-VNNI) or max|row| / 63 (other CPUs, or NMT_CPU_ISA=avx2).
torch::Tensor quantize_weight_int8(const torch::Tensor& weight);

/// x W^T + b: x [N, in] fp32 on the CPU, quantized per row; qweight from
/// quantize_weight_int8; bias [out] (any float type) or undefined. Result fp32 [N, out].
torch::Tensor int8_linear(const torch::Tensor& x, const torch::Tensor& qweight, const torch::Tensor& bias);

}  // namespace nmt
