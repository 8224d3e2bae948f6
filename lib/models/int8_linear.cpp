#include "nmt/models/int8_linear.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "nmt/base/cpu_features.h"
#include "nmt/base/error.h"
#include "nmt/base/parallel_loops.h"
#include "onednn_functions.h"

namespace nmt {
namespace {

// Row-major C = alpha (op(A) - ao)(op(B) - bo) + beta C + co; offsetc 'F': one fixed co
// for all of C. Unsigned inputs and signed weights: what the CPUs' int8 instructions
// multiply (vpmaddubsw, vpdpbusd), so oneDNN runs it as it is. Its s8 x s8 GEMM shifts the
// inputs to u8 itself and, without AVX512-VNNI, recomputes the weights' compensation on
// every call.
using GemmU8Function = decltype(&dnnl_gemm_u8s8s32);

GemmU8Function gemm_u8() {
  static const auto function = reinterpret_cast<GemmU8Function>(find_onednn_function("dnnl_gemm_u8s8s32"));
  return function;
}

// Inputs are quantized onto -127..127 and stored shifted by this, as u8.
constexpr int kInputShift = 128;

// The symmetric scale of a row whose largest magnitude is `largest` onto -levels..levels
// (1 for a zero row): the one rule for weights and inputs.
inline float symmetric_scale(float largest, int levels) {
  return largest > 0 ? largest / static_cast<float>(levels) : 1.0f;
}

// Symmetric scale of each row of a weight [rows, in], float32.
torch::Tensor weight_row_scales(const torch::Tensor& weight, int levels) {
  auto scales = weight.abs().amax(1).contiguous();
  float* data = scales.data_ptr<float>();
  for (int64_t r = 0; r < scales.numel(); ++r) data[r] = symmetric_scale(data[r], levels);
  return scales;
}

// The weights' range. Without VNNI, oneDNN multiplies the u8 inputs by the weights with
// vpmaddubsw, whose 16-bit sums of two products saturate when 255 x |w| x 2 > 32767:
// weights within -63..63 can never saturate it (measured exact against an int64
// reference; full-range weights were off by up to 7e5 in the sums).
int weight_levels() { return cpu_features().avx512_vnni ? 127 : 63; }

// Rows begin..end of x [rows, in] to 8 bits, each with its own scale max|row| / 127 (1 for
// a zero row): q = x / scale rounded half to even (as LibTorch's div and round give),
// stored as q + 128 in one pass per row.
inline __attribute__((always_inline)) void quantize_rows_body(const float* x, int64_t in, int64_t begin, int64_t end,
                                                              std::uint8_t* quantized, float* scales) {
  for (int64_t r = begin; r < end; ++r) {
    const float* row = x + r * in;
    float partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // lanes the compiler may vectorise
    int64_t c = 0;
    for (; c + 8 <= in; c += 8)
      for (int j = 0; j < 8; ++j) partial[j] = std::max(partial[j], std::fabs(row[c + j]));
    float largest = 0;
    for (; c < in; ++c) largest = std::max(largest, std::fabs(row[c]));
    for (float p : partial) largest = std::max(largest, p);
    const float scale = symmetric_scale(largest, 127);
    scales[r] = scale;
    std::uint8_t* out = quantized + r * in;
    for (c = 0; c < in; ++c) out[c] = static_cast<std::uint8_t>(std::nearbyint(row[c] / scale) + kInputShift);
  }
}
NMT_ISA_VERSIONS(quantize_rows, quantize_rows_body)

// sums[r, c] -> (sums[r, c] - compensation[c]) * row_scale[r] * column_scale[c] + bias[c]
// (bias may be null), in place: the float result overwrites the int32 sum it came from, so
// the widest tensor of the step ([rows, 8000] for the output projection) is read and
// written once and no second buffer of its size is touched. The sums are read through
// memcpy: the buffer is only ever accessed as float here.
inline __attribute__((always_inline)) void dequantize_in_place_body(float* sums, const std::int32_t* compensation,
                                                                    const float* row_scale, const float* column_scale,
                                                                    const float* bias, int64_t begin, int64_t end,
                                                                    int64_t out) {
  static_assert(sizeof(float) == sizeof(std::int32_t), "int32 sums become floats in place");
  for (int64_t r = begin; r < end; ++r) {
    const float scale = row_scale[r];
    float* row = sums + r * out;
    for (int64_t c = 0; c < out; ++c) {
      std::int32_t sum;
      std::memcpy(&sum, row + c, sizeof sum);
      row[c] = static_cast<float>(sum - compensation[c]) * scale * column_scale[c] + (bias ? bias[c] : 0.0f);
    }
  }
}
NMT_ISA_VERSIONS(dequantize_in_place, dequantize_in_place_body)

}  // namespace

bool onednn_int8_gemm_available() { return gemm_u8() != nullptr; }

Int8Weight quantize_weight_int8(const torch::Tensor& weight) {
  const auto w = weight.detach().to(torch::kFloat).contiguous();
  const auto scales = weight_row_scales(w, weight_levels()).to(torch::kDouble);
  const auto zero_points = torch::zeros({w.size(0)}, torch::kLong);
  // LibTorch's quantizer rounds; its values and scales are then kept as plain tensors.
  const auto quantized = torch::quantize_per_channel(w, scales, zero_points, 0, torch::kQInt8);
  auto values = quantized.int_repr().contiguous();
  // The shift of the inputs adds 128 x (the row's sum of values) to every sum of that row.
  auto compensation = values.sum(1, /*keepdim=*/false, torch::kInt).mul_(kInputShift).contiguous();
  return {values, quantized.q_per_channel_scales().to(torch::kFloat).contiguous(), compensation};
}

torch::Tensor int8_linear(const torch::Tensor& x, const Int8Weight& weight, const torch::Tensor& bias) {
  if (!onednn_int8_gemm_available()) throw Error("int8 inference needs oneDNN's int8 GEMM (not found)");
  const auto a = x.to(torch::kFloat).contiguous();
  const int64_t rows = a.size(0), in = a.size(1), out = weight.values.size(0);
  if (weight.values.size(1) != in)
    throw Error("int8_linear: input has " + std::to_string(in) + " features, weight expects " +
                std::to_string(weight.values.size(1)));
  // The GEMM's int32 sums, then (in place) the fp32 result.
  auto y = torch::empty({rows, out}, a.options());
  if (rows == 0) return y;
  auto quantized = torch::empty({rows, in}, a.options().dtype(torch::kByte));
  auto row_scales = torch::empty({rows}, a.options());
  at::parallel_for(0, rows, items_per_task(in), [&](int64_t begin, int64_t end) {
    quantize_rows(a.data_ptr<float>(), in, begin, end, quantized.data_ptr<std::uint8_t>(), row_scales.data_ptr<float>());
  });
  const std::int32_t no_offset = 0;
  const auto* weight_data = weight.values.data_ptr<std::int8_t>();
  const dnnl_status_t status =
      gemm_u8()('N', 'T', 'F', rows, out, in, 1.0f, quantized.data_ptr<std::uint8_t>(), in, 0, weight_data, in, 0,
                0.0f, reinterpret_cast<std::int32_t*>(y.data_ptr<float>()), out, &no_offset);
  if (status != dnnl_success)
    throw Error("oneDNN int8 GEMM failed with status " + std::to_string(static_cast<int>(status)));
  const auto fp32_bias = bias.defined() ? bias.to(torch::kFloat).contiguous() : torch::Tensor();
  const float* bias_data = fp32_bias.defined() ? fp32_bias.data_ptr<float>() : nullptr;
  at::parallel_for(0, rows, items_per_task(out), [&](int64_t begin, int64_t end) {
    dequantize_in_place(y.data_ptr<float>(), weight.compensation.data_ptr<std::int32_t>(), row_scales.data_ptr<float>(),
                        weight.scales.data_ptr<float>(), bias_data, begin, end, out);
  });
  return y;
}

}  // namespace nmt
