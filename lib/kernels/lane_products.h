#pragma once
// The small products attention is made of, on rows of floats, eight lanes at once
// (lib/ only; used inside functions compiled per instruction set, so always inlined):
//   dots:          one row against `Keys` rows (scores: query . key)
//   dots_tile:     rows against a block of rows stored transposed (scores of many queries)
//   transpose:     rows into that transposed form, eight by eight in registers
//   weighted_rows: a weighted sum of rows (context: sum over t of weight t x value t)
// Written with GCC's vector extension: eight floats as one value, what an AVX2 register
// holds, two SSE or NEON registers elsewhere. Left to itself, the compiler kept arrays of
// partial sums in memory or interchanged the loops into scalar code.
#include <cstdint>
#include <cstring>

namespace nmt::lanes {

typedef float Lanes __attribute__((vector_size(8 * sizeof(float))));
constexpr int64_t kLanes = 8;

// (An out-parameter: returning a vector type from a function of the baseline version would
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

/// For r < Rows and c < Cols x 8: out[r * out_row + c] = a_r . key_c, where a_r is the row
/// of dk floats at a + r * a_row and key_c is column c of `transposed` (dk rows of `width`
/// floats: element d of key c at transposed[d * width + c]). Writes the first `valid`
/// columns only. Each sum runs over d in order in its own lane: no sums across lanes, and
/// the same additions in the same order whatever Rows and Cols are.
template <int Rows, int Cols>
inline __attribute__((always_inline)) void dots_tile(const float* a, int64_t a_row, const float* transposed,
                                                     int64_t width, int64_t dk, int64_t valid, float* out,
                                                     int64_t out_row) {
  Lanes sum[Rows][Cols] = {};
  for (int64_t d = 0; d < dk; ++d) {
    Lanes key[Cols];
    for (int c = 0; c < Cols; ++c) load_lanes(key[c], transposed + d * width + c * kLanes);
    for (int r = 0; r < Rows; ++r) {
      const float q = a[r * a_row + d];
      for (int c = 0; c < Cols; ++c) sum[r][c] += q * key[c];
    }
  }
  for (int r = 0; r < Rows; ++r) {
    float row[Cols * kLanes];
    std::memcpy(row, sum[r], sizeof row);
    std::memcpy(out + r * out_row, row, static_cast<size_t>(valid) * sizeof(float));
  }
}

/// out[d * width + j] = b[j * b_row + d] for j < n, d < dk, and 0 for n <= j < width
/// (width: a multiple of 8, at least n). Blocks of 8 x 8 go through registers: loads and
/// stores of whole rows instead of one float at a time.
inline __attribute__((always_inline)) void transpose(const float* b, int64_t b_row, int64_t n, int64_t dk, float* out,
                                                     int64_t width) {
  typedef int Order __attribute__((vector_size(8 * sizeof(int))));
  const int64_t whole = dk / kLanes * kLanes;
  for (int64_t j = 0; j < width; j += kLanes) {
    for (int64_t d = 0; d < whole; d += kLanes) {
      Lanes r[kLanes] = {};
      for (int64_t l = 0; l < kLanes && j + l < n; ++l) load_lanes(r[l], b + (j + l) * b_row + d);
      // Pairs interleaved, then pairs of pairs, then halves: column k of the block.
      Lanes t[kLanes], u[kLanes], c[kLanes];
      for (int p = 0; p < 4; ++p) {
        t[2 * p] = __builtin_shuffle(r[2 * p], r[2 * p + 1], Order{0, 8, 1, 9, 4, 12, 5, 13});
        t[2 * p + 1] = __builtin_shuffle(r[2 * p], r[2 * p + 1], Order{2, 10, 3, 11, 6, 14, 7, 15});
      }
      for (int p = 0; p < 2; ++p)
        for (int q = 0; q < 2; ++q) {
          u[4 * p + 2 * q] = __builtin_shuffle(t[4 * p + q], t[4 * p + q + 2], Order{0, 1, 8, 9, 4, 5, 12, 13});
          u[4 * p + 2 * q + 1] = __builtin_shuffle(t[4 * p + q], t[4 * p + q + 2], Order{2, 3, 10, 11, 6, 7, 14, 15});
        }
      for (int k = 0; k < 4; ++k) {
        c[k] = __builtin_shuffle(u[k], u[k + 4], Order{0, 1, 2, 3, 8, 9, 10, 11});
        c[k + 4] = __builtin_shuffle(u[k], u[k + 4], Order{4, 5, 6, 7, 12, 13, 14, 15});
      }
      for (int64_t k = 0; k < kLanes; ++k) std::memcpy(out + (d + k) * width + j, &c[k], sizeof(Lanes));
    }
    for (int64_t d = whole; d < dk; ++d)
      for (int64_t l = 0; l < kLanes; ++l) out[d * width + j + l] = j + l < n ? b[(j + l) * b_row + d] : 0.0f;
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
