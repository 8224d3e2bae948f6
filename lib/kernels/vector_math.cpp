#include "nmt/kernels/vector_math.h"

#include <algorithm>
#include <cmath>

#include "nmt/kernels/isa_versions.h"

namespace nmt {
namespace {

constexpr int kRowPartials = 16;  // partial results per row: lanes the compiler can vectorise

inline __attribute__((always_inline)) RowSums max_and_sum_body(const float* z, int64_t n) {
  float max_lane[kRowPartials], sum_lane[kRowPartials];
  for (int k = 0; k < kRowPartials; ++k) max_lane[k] = -INFINITY, sum_lane[k] = 0;
  int64_t j = 0;
  for (; j + kRowPartials <= n; j += kRowPartials)
    for (int k = 0; k < kRowPartials; ++k) max_lane[k] = std::max(max_lane[k], z[j + k]), sum_lane[k] += z[j + k];
  RowSums s{-INFINITY, 0};
  for (; j < n; ++j) s.max = std::max(s.max, z[j]), s.sum += z[j];
  for (int k = 0; k < kRowPartials; ++k) s.max = std::max(s.max, max_lane[k]), s.sum += sum_lane[k];
  return s;
}
NMT_ISA_VERSIONS(max_and_sum_versions, max_and_sum_body)

// The sum of exp(z - shift) over n values, kRowPartials partial sums then the tail, then the lanes
// in order; with Write (z then points to writable memory) each exp also replaces its z.
// One body for sum_exp and exp_in_place, inlined into each version of both.
template <bool Write, typename Values>
inline __attribute__((always_inline)) float shifted_exp_sum(Values z, int64_t n, float shift) {
  float lane[kRowPartials] = {};
  int64_t j = 0;
  for (; j + kRowPartials <= n; j += kRowPartials)
    for (int k = 0; k < kRowPartials; ++k) {
      const float e = exp_approx(z[j + k] - shift);
      if constexpr (Write) z[j + k] = e;
      lane[k] += e;
    }
  float total = 0;
  for (; j < n; ++j) {
    const float e = exp_approx(z[j] - shift);
    if constexpr (Write) z[j] = e;
    total += e;
  }
  for (int k = 0; k < kRowPartials; ++k) total += lane[k];
  return total;
}

NMT_ISA_VERSIONS(sum_exp_versions, shifted_exp_sum<false>)
NMT_ISA_VERSIONS(exp_in_place_versions, shifted_exp_sum<true>)
NMT_KERNEL_TABLE_ENTRY("vector max and sum", "none: the CPU paths of the loss and the searches always run it",
                       max_and_sum_versions_widest)
NMT_KERNEL_TABLE_ENTRY("vector exp sum", "none: the CPU paths of the loss, the searches and attention always run it",
                       sum_exp_versions_widest, exp_in_place_versions_widest)

}  // namespace

RowSums max_and_sum(const float* z, int64_t n) { return max_and_sum_versions(z, n); }

float sum_exp(const float* z, int64_t n, float shift) { return sum_exp_versions(z, n, shift); }

float exp_in_place(float* z, int64_t n, float shift) { return exp_in_place_versions(z, n, shift); }

}  // namespace nmt
