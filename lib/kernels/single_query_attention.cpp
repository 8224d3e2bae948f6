#include "nmt/kernels/single_query_attention.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "lane_products.h"
#include "nmt/base/error.h"
#include "nmt/base/parallel_loops.h"
#include "nmt/kernels/isa_versions.h"
#include "nmt/kernels/vector_math.h"

namespace nmt {
namespace {

using lanes::dots;

// Element strides of a [B, H, T, dk] tensor, and its data.
struct View4 {
  const float* data;
  int64_t batch, head, position;
  explicit View4(const torch::Tensor& t)
      : data(t.data_ptr<float>()), batch(t.stride(0)), head(t.stride(1)), position(t.stride(2)) {}
  const float* at(int64_t b, int64_t h, int64_t t = 0) const {
    return data + b * batch + h * head + t * position;
  }
};

// Which key/value row query row b reads at position t (KeyValue::rows).
struct RowLookup {
  const int64_t* table = nullptr;  // null: row b
  int64_t row_stride = 0, position_stride = 0;
  explicit RowLookup(const torch::Tensor& rows) {
    if (!rows.defined()) return;
    table = rows.data_ptr<int64_t>();
    row_stride = rows.stride(0);
    position_stride = rows.dim() == 2 ? rows.stride(1) : 0;
  }
  int64_t at(int64_t b, int64_t t) const {
    return table == nullptr ? b : table[b * row_stride + t * position_stride];
  }
};

constexpr int kKeysAtOnce = 4;

// Scores of one (row, head) into `weights` (bias added), returning their maximum.
inline __attribute__((always_inline)) float scores(const float* q, const View4& keys, const RowLookup& rows,
                                                   const float* bias, int64_t b, int64_t h, int64_t length,
                                                   int64_t dk, float scale, float* weights) {
  float max_score = -INFINITY;
  auto keep = [&](int64_t t, float dot_product) {
    const float score = dot_product * scale;
    weights[t] = bias != nullptr ? bias[t] + score : score;
    max_score = std::max(max_score, weights[t]);
  };
  int64_t t = 0;
  for (; t + kKeysAtOnce <= length; t += kKeysAtOnce) {
    const float* group[kKeysAtOnce];
    for (int k = 0; k < kKeysAtOnce; ++k) group[k] = keys.at(rows.at(b, t + k), h, t + k);
    float sums[kKeysAtOnce];
    dots<kKeysAtOnce>(q, group, dk, sums);
    for (int k = 0; k < kKeysAtOnce; ++k) keep(t + k, sums[k]);
  }
  for (; t < length; ++t) {
    const float* key = keys.at(rows.at(b, t), h, t);
    float sum;
    dots<1>(q, &key, dk, &sum);
    keep(t, sum);
  }
  return max_score;
}

// One (row, head): scores into `weights`, softmax in place, weighted values into `out`.
template <int64_t Dk>
inline __attribute__((always_inline)) void attend(const float* q, const View4& keys, const View4& values,
                                                  const RowLookup& rows, const float* bias, int64_t b, int64_t h,
                                                  int64_t length, int64_t dk, float scale, float* weights, float* out) {
  const float max_score = scores(q, keys, rows, bias, b, h, length, dk, scale, weights);
  const float total = exp_in_place(weights, length, max_score);
  for (int64_t t = 0; t < length; ++t) weights[t] /= total;
  lanes::weighted_rows<Dk>([&](int64_t t) { return values.at(rows.at(b, t), h, t); }, weights, 1, length, dk, out);
}

// The kernel for heads of 64 (d_model 256 or 512 with 4 or 8 heads; dk must be 64) and for
// any width, chosen by the head width of the call. Compiled for AVX2 and for any x86-64
// (NMT_ISA_VERSIONS_TO_AVX2): the same operations in the same order, eight lanes at once;
// no FMA, so results are bit-identical to the baseline build's.
NMT_ISA_VERSIONS_TO_AVX2(attend_one_64, attend<64>)
NMT_ISA_VERSIONS_TO_AVX2(attend_one, attend<0>)
NMT_KERNEL_TABLE_ENTRY("single-query attention",
                       "the attention products after gathering the rows (every call but one query position per row "
                       "without a gradient)",
                       attend_one_64_widest, attend_one_widest)

}  // namespace

bool single_query_applies(const torch::Tensor& query, const SharedKeyValue& memory, const torch::Tensor& bias) {
  auto plain = [](const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.dim() == 4 &&
           t.stride(3) == 1 && !t.requires_grad();
  };
  const auto& rows = memory.rows;
  const bool rows_ok = !rows.defined() ||
                       (rows.device().is_cpu() && rows.scalar_type() == torch::kLong &&
                        rows.size(0) == query.size(0) &&
                        (rows.dim() == 1 || (rows.dim() == 2 && rows.size(1) == memory.keys.size(2))));
  const int64_t memory_rows = rows.defined() ? memory.keys.size(0) : query.size(0);
  const bool bias_ok = !bias.defined() || (plain(bias) && bias.size(1) == 1 &&
                                           bias.size(2) == 1 && bias.size(0) == memory_rows &&
                                           bias.size(3) == memory.keys.size(2));
  const auto& keys = memory.keys;
  const bool shapes_agree = keys.dim() == 4 && keys.sizes() == memory.values.sizes() &&
                            keys.size(1) == query.size(1) && keys.size(3) == query.size(3) &&
                            (rows.defined() || keys.size(0) >= query.size(0));
  return query.size(2) == 1 && plain(query) && plain(memory.keys) && plain(memory.values) && shapes_agree &&
         rows_ok && bias_ok;
}

SingleQueryAttention single_query_attention(const torch::Tensor& query, const SharedKeyValue& memory,
                                            const torch::Tensor& bias, double scale) {
  // The kernel reads raw memory: inputs it cannot read are the caller's error.
  if (!single_query_applies(query, memory, bias))
    throw Error("single-query attention: inputs it cannot read (one fp32 CPU query position per row, no gradient, "
                "keys, values, rows and bias that agree)");
  const int64_t query_rows = query.size(0), heads = query.size(1), dk = query.size(3);
  const int64_t length = memory.keys.size(2);
  SingleQueryAttention result;
  result.context = torch::empty({query_rows, 1, heads * dk}, query.options());
  result.weights = torch::empty({query_rows, heads, 1, length}, query.options());
  const View4 q(query), keys(memory.keys), values(memory.values);
  const RowLookup rows(memory.rows);
  const float* bias_data = bias.defined() ? bias.data_ptr<float>() : nullptr;
  const int64_t bias_stride = bias.defined() ? bias.stride(0) : 0;
  float* context = result.context.data_ptr<float>();
  float* weights = result.weights.data_ptr<float>();
  // Work per item is small (length * dk multiply-adds twice): hand out chunks.
  at::parallel_for(0, query_rows * heads, items_per_task(length * dk), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / heads, h = i % heads;
      const float* row_bias = bias_data ? bias_data + rows.at(b, 0) * bias_stride : nullptr;
      const float* query_row = q.at(b, h);
      float* row_weights = weights + i * length;
      float* row_context = context + b * heads * dk + h * dk;
      if (dk == 64)
        attend_one_64(query_row, keys, values, rows, row_bias, b, h, length, dk, static_cast<float>(scale),
                      row_weights, row_context);
      else
        attend_one(query_row, keys, values, rows, row_bias, b, h, length, dk, static_cast<float>(scale),
                   row_weights, row_context);
    }
  });
  return result;
}

}  // namespace nmt
