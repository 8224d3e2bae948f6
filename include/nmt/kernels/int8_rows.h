#pragma once
// The elementwise halves of int8 inference's Linear products (models/int8_linear.h), around
// oneDNN's u8 x s8 -> s32 GEMM: the inputs quantized per row to u8 before it, its int32
// sums scaled back to fp32 after it.
#include <torch/types.h>

#include <cstdint>

namespace nmt {

/// Inputs are quantized onto -127..127 and stored shifted by this, as u8 (the weights'
/// compensation undoes the shift).
constexpr int kInt8InputShift = 128;

/// The symmetric scale of a row whose largest magnitude is `largest` onto -levels..levels
/// (1 for a zero row): the one rule for weights and inputs.
inline float symmetric_scale(float largest, int levels) {
  return largest > 0 ? largest / static_cast<float>(levels) : 1.0f;
}

struct QuantizedRows {
  torch::Tensor values;  ///< [rows, in] u8: round(x / scale) + kInt8InputShift
  torch::Tensor scales;  ///< [rows] fp32: max |row| / 127 (1 for a zero row)
};

/// x [rows, in] fp32 contiguous on the CPU, each row to 8 bits with its own scale, rounded
/// half to even (as LibTorch's div and round give).
QuantizedRows quantize_rows_u8(const torch::Tensor& x);

/// sums [rows, out], the GEMM's int32 sums held in an fp32 tensor's memory, become in place
/// (sum - compensation[c]) * row_scales[r] * column_scales[c] + bias[c]: the fp32 result.
/// compensation [out] int32, row_scales [rows] and column_scales [out] fp32, bias [out]
/// fp32 or undefined; all contiguous.
void dequantize_in_place(torch::Tensor& sums, const torch::Tensor& compensation, const torch::Tensor& row_scales,
                         const torch::Tensor& column_scales, const torch::Tensor& bias);

}  // namespace nmt
