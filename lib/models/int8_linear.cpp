#include "nmt/models/int8_linear.h"

#include <torch/torch.h>

#include <cstdint>

#include "nmt/base/cpu_features.h"
#include "nmt/base/error.h"
#include "nmt/kernels/int8_rows.h"
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
  auto compensation = values.sum(1, /*keepdim=*/false, torch::kInt).mul_(kInt8InputShift).contiguous();
  return with_amx_packing({values, quantized.q_per_channel_scales().to(torch::kFloat).contiguous(), compensation, {}});
}

Int8Weight with_amx_packing(Int8Weight weight) {
  if (onednn_amx_enabled(AmxProduct::int8) && weight.values.device().is_cpu())
    weight.packed = std::make_shared<const OnednnAmxWeight>(AmxProduct::int8, weight.values);
  return weight;
}

torch::Tensor int8_linear(const torch::Tensor& x, const Int8Weight& weight, const torch::Tensor& bias) {
  if (!onednn_int8_gemm_available()) throw Error("int8 inference needs oneDNN's int8 GEMM (not found)");
  if (!x.device().is_cpu()) throw Error("int8 inference runs on the CPU only, got an input on " + x.device().str());
  const auto a = x.to(torch::kFloat).contiguous();
  const int64_t rows = a.size(0), in = a.size(1), out = weight.values.size(0);
  if (weight.values.size(1) != in)
    throw Error("int8_linear: input has " + std::to_string(in) + " features, weight expects " +
                std::to_string(weight.values.size(1)));
  if (rows == 0) return torch::empty({rows, out}, a.options());
  const auto quantized = quantize_rows_u8(a);
  const auto fp32_bias = bias.defined() ? bias.to(torch::kFloat).contiguous() : torch::Tensor();
  if (weight.packed) {
    auto y = weight.packed->apply(quantized.values).view(torch::kFloat);  // the int32 sums, in place to fp32
    dequantize_in_place(y, weight.compensation, quantized.scales, weight.scales, fp32_bias);
    return y;
  }
  // The GEMM's int32 sums, then (in place) the fp32 result.
  auto y = torch::empty({rows, out}, a.options());
  const std::int32_t no_offset = 0;
  const auto* weight_data = weight.values.data_ptr<std::int8_t>();
  const dnnl_status_t status =
      gemm_u8()('N', 'T', 'F', rows, out, in, 1.0f, quantized.values.data_ptr<std::uint8_t>(), in, 0, weight_data, in, 0,
                0.0f, reinterpret_cast<std::int32_t*>(y.data_ptr<float>()), out, &no_offset);
  if (status != dnnl_success)
    throw Error("oneDNN int8 GEMM failed with status " + std::to_string(static_cast<int>(status)));
  dequantize_in_place(y, weight.compensation, quantized.scales, weight.scales, fp32_bias);
  return y;
}

}  // namespace nmt
