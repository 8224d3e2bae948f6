#pragma once
// The two small products attention is made of, on rows of floats, eight lanes at once
// (lib/ only; used inside functions cloned per instruction set, so always inlined):
//   dots:          one row against `Keys` rows (scores: query . key)
//   weighted_rows: a weighted sum of rows (context: sum over t of weight t x value t)
// Written with GCC's vector extension: eight floats as one value, what an AVX2 register
// holds, two SSE or NEON registers elsewhere. Left to itself, the compiler kept arrays of
// partial sums in memory or interchanged the loops into scalar code.
#include <cstdint>
#include <cstring>

namespace nmt::lanes {

typedef float Lanes __attribute__((vector_size(8 * sizeof(float))));
constexpr int64_t kLanes = 8;

// (An out-parameter: returning a vector type from a function of the default clone would
// change its ABI, GCC warns, even where the function is always inlined.)
inline __attribute__((always_inline)) void load_lanes(Lanes& v, const float* p) { std::memcpy(&v, p, sizeof v); }

/// sums[k] = q . keys[k] over n elements, for `Keys` keys. Eight partial sums per key
/// (lane j sums the products at positions = j mod 8), added in lane order after the tail:
/// the same additions in the same order whatever `Keys` is, without reassociating one
/// accumulator (which the compiler must not do without -ffast-math). Several keys at once
/// keep independent additions in flight instead of waiting on one accumulator.
template <int Keys>
inline __attribute__((always_inline)) void dots(const float* q, const float* const* keys, int64_t n, float* sums) {
  Lanes partial[Keys] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Lanes query, key;
    load_lanes(query, q + i);
    for (int k = 0; k < Keys; ++k) {
      load_lanes(key, keys[k] + i);
      partial[k] += query * key;
    }
  }
  for (int k = 0; k < Keys; ++k) {
    float sum = 0;
    for (int64_t tail = i; tail < n; ++tail) sum += q[tail] * keys[k][tail];
    for (int64_t j = 0; j < kLanes; ++j) sum += partial[k][j];
    sums[k] = sum;
  }
}

/// out[0, dk) = sum over t < length of weights[t * weight_stride] x row_of(t)[0, dk), t in
/// order. With the width known at compile time (Dk > 0) the sums stay in registers across t
/// instead of going through `out`, which the compiler must assume may alias the rows. Same
/// additions in the same order either way.
template <int64_t Dk, typename RowOf>
inline __attribute__((always_inline)) void weighted_rows(const RowOf& row_of, const float* weights,
                                                         int64_t weight_stride, int64_t length, int64_t dk,
                                                         float* out) {
  if constexpr (Dk > 0) {
    static_assert(Dk % kLanes == 0, "whole lanes");
    Lanes sum[Dk / kLanes] = {};
    for (int64_t t = 0; t < length; ++t) {
      const float w = weights[t * weight_stride];
      const float* row = row_of(t);
      for (int64_t j = 0; j < Dk / kLanes; ++j) {
        Lanes value;
        load_lanes(value, row + j * kLanes);
        sum[j] += w * value;
      }
    }
    std::memcpy(out, sum, sizeof sum);
  } else {
    for (int64_t d = 0; d < dk; ++d) out[d] = 0.0f;
    for (int64_t t = 0; t < length; ++t) {
      const float w = weights[t * weight_stride];
      const float* row = row_of(t);
      for (int64_t d = 0; d < dk; ++d) out[d] += w * row[d];
    }
  }
}

}  // namespace nmt::lanes
