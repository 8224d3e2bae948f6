#pragma once
// Dynamic int8 Linear layers for inference (--precision int8), through oneDNN's
// u8 x s8 -> s32 GEMM (its matmul primitive over weights packed once where it runs that
// on AMX: onednn_amx_weight.h):
//  - weights: symmetric per-output-row int8, quantized once (Int8Weight: the int8 values
//    and one fp32 scale per row), onto -127..127 where the CPU has AVX512-VNNI and onto
//    -63..63 elsewhere (AVX2's 16-bit intermediate sums saturate with wider weights:
//    int8_linear.cpp);
//  - inputs: symmetric per-row int8, quantized at every call from the row's max |x|,
//    shifted by 128 to u8 (the weights' compensation undoes the shift);
//  - the int32 sums are scaled back to fp32 and the fp32 bias added.
// A Linear layer on the int8 path (linear.h) holds the Int8Weight in place of its fp32
// weight, which it no longer has.
// LibTorch's own dynamic quantized Linear needs FBGEMM, which Debian's build lacks.
#include <torch/types.h>

#include <memory>

#include "nmt/models/onednn_amx_weight.h"

namespace nmt {

/// Whether oneDNN's int8 GEMM (dnnl_gemm_u8s8s32) was found in the loaded libdnnl.
bool onednn_int8_gemm_available();

/// A weight quantized per output row: weight[r][c] ~ values[r][c] * scales[r].
struct Int8Weight {
  torch::Tensor values;  ///< [out, in] int8 (kChar), contiguous
  torch::Tensor scales;  ///< [out] fp32
  /// [out] int32: 128 x the sum of each row's values. Inputs reach the GEMM as u8, shifted
  /// by 128; this is what the shift adds to each of that row's sums.
  torch::Tensor compensation;
  /// The values packed for oneDNN's matmul on AMX, where oneDNN runs it there
  /// (onednn_amx_enabled(AmxProduct::int8)); null elsewhere. The sums are the GEMM's,
  /// exactly: integer products.
  std::shared_ptr<const OnednnAmxWeight> packed;
};

/// `weight` with its packed copy where AMX runs the int8 product (from values alone).
Int8Weight with_amx_packing(Int8Weight weight);

/// weight [out, in] fp32 -> per-row int8 with scale max|row| / 127 (AVX512-VNNI) or
/// max|row| / 63 (other CPUs, or NMT_CPU_ISA=avx2).
Int8Weight quantize_weight_int8(const torch::Tensor& weight);

/// x W^T + b: x [N, in] fp32 on the CPU, quantized per row; weight from
/// quantize_weight_int8; bias [out] (any float type) or undefined. Result fp32 [N, out].
torch::Tensor int8_linear(const torch::Tensor& x, const Int8Weight& weight, const torch::Tensor& bias);

}  // namespace nmt
