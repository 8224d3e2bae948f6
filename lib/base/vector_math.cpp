#include "nmt/base/vector_math.h"

#include <algorithm>
#include <cmath>

#include "nmt/base/cpu_features.h"

namespace nmt {
namespace {

constexpr int kLanes = 16;  // partial results per row: lanes the compiler can vectorise

}  // namespace

NMT_X86_CLONES("avx512f", "avx2", "default") RowSums max_and_sum(const float* z, int64_t n) {
  float max_lane[kLanes], sum_lane[kLanes];
  for (int k = 0; k < kLanes; ++k) max_lane[k] = -INFINITY, sum_lane[k] = 0;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) max_lane[k] = std::max(max_lane[k], z[j + k]), sum_lane[k] += z[j + k];
  RowSums s{-INFINITY, 0};
  for (; j < n; ++j) s.max = std::max(s.max, z[j]), s.sum += z[j];
  for (int k = 0; k < kLanes; ++k) s.max = std::max(s.max, max_lane[k]), s.sum += sum_lane[k];
  return s;
}

NMT_X86_CLONES("avx512f", "avx2", "default") float sum_exp(const float* z, int64_t n, float shift) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] += exp_approx(z[j + k] - shift);
  float total = 0;
  for (; j < n; ++j) total += exp_approx(z[j] - shift);
  for (int k = 0; k < kLanes; ++k) total += lane[k];
  return total;
}

NMT_X86_CLONES("avx512f", "avx2", "default") float exp_in_place(float* z, int64_t n, float shift) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] += z[j + k] = exp_approx(z[j + k] - shift);
  float total = 0;
  for (; j < n; ++j) total += z[j] = exp_approx(z[j] - shift);
  for (int k = 0; k < kLanes; ++k) total += lane[k];
  return total;
}

}  // namespace nmt
