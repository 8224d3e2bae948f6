#pragma once
// Row reductions over float arrays that the compiler vectorises (compiled per instruction
// set, kernels/isa_versions.h): the exponential in plain arithmetic, because std::exp does
// not vectorise without -ffast-math. Used where a loop over a vocabulary-sized row or an
// attention row would otherwise cost one libm call per element.
#include <cstdint>
#include <cstring>

namespace nmt {

/// exp(x) in plain arithmetic, so that loops of it vectorise: Cephes' expf, within 2 ulp.
/// Arguments below -87 give 0 (flushed: exp would be ~1.6e-38 or a denormal), so masked
/// scores weigh exactly nothing. +inf and NaN are not handled.
inline float exp_approx(float x) {
  const float clamped = x < -87.0f ? -87.0f : x;
  // Round to nearest by adding and subtracting 1.5 * 2^23 (no call, vectorises).
  const float n = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const float result = y * scale;
  return x < -87.0f ? 0.0f : result;
}

struct RowSums {
  float max = 0;  ///< largest element (-inf for an empty row)
  float sum = 0;  ///< sum of the elements
};

/// Largest element and sum of z[0, n).
RowSums max_and_sum(const float* z, int64_t n);

/// Sum of exp_approx(z[j] - shift) over z[0, n).
float sum_exp(const float* z, int64_t n, float shift);

/// z[j] = exp_approx(z[j] - shift) in place over z[0, n); returns their sum, added as
/// sum_exp adds them (so it equals sum_exp of the original row).
float exp_in_place(float* z, int64_t n, float shift);

}  // namespace nmt
