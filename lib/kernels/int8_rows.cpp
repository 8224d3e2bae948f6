#include "nmt/kernels/int8_rows.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "nmt/base/parallel_loops.h"
#include "nmt/kernels/isa_versions.h"

namespace nmt {
namespace {

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
    for (c = 0; c < in; ++c) out[c] = static_cast<std::uint8_t>(std::nearbyint(row[c] / scale) + kInt8InputShift);
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
NMT_ISA_VERSIONS(dequantize_in_place_versions, dequantize_in_place_body)
NMT_KERNEL_TABLE_ENTRY("int8 input quantization", "none: int8 inference needs it and oneDNN's int8 GEMM",
                       quantize_rows_widest)
NMT_KERNEL_TABLE_ENTRY("int8 dequantization", "none: int8 inference needs it and oneDNN's int8 GEMM",
                       dequantize_in_place_versions_widest)

}  // namespace

QuantizedRows quantize_rows_u8(const torch::Tensor& x) {
  const int64_t rows = x.size(0), in = x.size(1);
  QuantizedRows quantized{torch::empty({rows, in}, x.options().dtype(torch::kByte)), torch::empty({rows}, x.options())};
  at::parallel_for(0, rows, items_per_task(in), [&](int64_t begin, int64_t end) {
    quantize_rows(x.data_ptr<float>(), in, begin, end, quantized.values.data_ptr<std::uint8_t>(),
                  quantized.scales.data_ptr<float>());
  });
  return quantized;
}

void dequantize_in_place(torch::Tensor& sums, const torch::Tensor& compensation, const torch::Tensor& row_scales,
                         const torch::Tensor& column_scales, const torch::Tensor& bias) {
  const int64_t rows = sums.size(0), out = sums.size(1);
  const float* bias_data = bias.defined() ? bias.data_ptr<float>() : nullptr;
  at::parallel_for(0, rows, items_per_task(out), [&](int64_t begin, int64_t end) {
    dequantize_in_place_versions(sums.data_ptr<float>(), compensation.data_ptr<std::int32_t>(),
                                 row_scales.data_ptr<float>(), column_scales.data_ptr<float>(), bias_data, begin, end,
                                 out);
  });
}

}  // namespace nmt
