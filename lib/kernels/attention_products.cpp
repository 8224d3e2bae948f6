#include "nmt/kernels/attention_products.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "lane_products.h"
#include "nmt/kernels/isa_versions.h"
#include "nmt/base/error.h"
#include "nmt/base/parallel_loops.h"

namespace nmt {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int kQueryRows = 4;  // rows of a tile: each key vector loaded once serves four queries
constexpr int64_t kLanes = lanes::kLanes;

// The width of b's transposed copy: its n rows rounded up to whole vectors.
int64_t transposed_width(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

// a's rows [first, first + Rows) against every key: tiles of 16 keys, and of 8 for the last
// 8 or fewer (the copy is zero past n up to whole vectors only).
template <int Rows>
inline __attribute__((always_inline)) void dots_rows(const float* a, int64_t a_row, int64_t first,
                                                     const float* transposed, int64_t width, int64_t n, int64_t dk,
                                                     float* out) {
  const float* rows = a + first * a_row;
  float* out_rows = out + first * n;
  int64_t column = 0;
  for (; n - column > kLanes; column += 2 * kLanes)
    lanes::dots_tile<Rows, 2>(rows, a_row, transposed + column, width, dk, std::min(2 * kLanes, n - column),
                              out_rows + column, n);
  if (column < n)
    lanes::dots_tile<Rows, 1>(rows, a_row, transposed + column, width, dk, n - column, out_rows + column, n);
}

// out[i * n + j] = a_i . b_j for i < m, j < n: rows of dk floats, `a_row` and `b_row` apart.
// b is copied transposed into `scratch` (dk x transposed_width(n) floats, zeros past n), so
// that every sum runs in its own lane: no sums across lanes (which cost as much as the
// products at a head width of 64). Compiled per instruction set (NMT_ISA_VERSIONS): the
// same operations in the same order, so the same results on every CPU.
inline __attribute__((always_inline)) void slice_dots_body(const float* a, int64_t a_row, int64_t m, const float* b,
                                                           int64_t b_row, int64_t n, int64_t dk, float* out,
                                                           float* scratch) {
  const int64_t width = transposed_width(n);
  lanes::transpose(b, b_row, n, dk, scratch, width);
  int64_t i = 0;
  for (; i + kQueryRows <= m; i += kQueryRows) dots_rows<kQueryRows>(a, a_row, i, scratch, width, n, dk, out);
  for (; i < m; ++i) dots_rows<1>(a, a_row, i, scratch, width, n, dk, out);
}
NMT_ISA_VERSIONS(slice_dots, slice_dots_body)

// One slice of a weighted product: out row i (`out_row` apart) = sum over t < n of
// w[i * w_row + t * w_column] x b_t (rows of dk floats, `b_row` apart), for i < m.
struct WeightedSlice {
  const float* w;
  int64_t w_row, w_column, m, n;
  const float* b;
  int64_t b_row, dk;
  float* out;
  int64_t out_row;
};

template <int64_t Dk>
inline __attribute__((always_inline)) void weighted_slice(const WeightedSlice& s) {
  const auto row_of = [&](int64_t t) { return s.b + t * s.b_row; };
  for (int64_t i = 0; i < s.m; ++i)
    lanes::weighted_rows<Dk>(row_of, s.w + i * s.w_row, s.w_column, s.n, s.dk, s.out + i * s.out_row);
}

// Heads of 64 (sums in registers) and any width, chosen by the head width of the call.
NMT_ISA_VERSIONS(weighted_slice_64, weighted_slice<64>)
NMT_ISA_VERSIONS(weighted_slice_any, weighted_slice<0>)
NMT_KERNEL_TABLE_ENTRY("attention products", "torch::matmul (a model not computing in fp32 on the CPU)",
                       slice_dots_widest, weighted_slice_64_widest, weighted_slice_any_widest)

// Rows of dk floats one apart: what the kernels read a [B, H, T, dk] tensor as.
torch::Tensor with_unit_last_stride(const torch::Tensor& t) { return t.stride(3) == 1 ? t : t.contiguous(); }

// Calls slice(b, h, scratch) for every (b, h) < (batch, heads), spread over LibTorch's
// threads; scratch: scratch_floats floats of the task's own, allocated once per task.
template <typename Slice>
void for_each_slice(int64_t batch, int64_t heads, int64_t slice_work, size_t scratch_floats, const Slice& slice) {
  at::parallel_for(0, batch * heads, items_per_task(slice_work), [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(scratch_floats);
    for (int64_t i = begin; i < end; ++i) slice(i / heads, i % heads, scratch.data());
  });
}

// a [B, H, m, dk], b [B, H, n, dk] -> a b^T [B, H, m, n], contiguous.
torch::Tensor row_dots(const torch::Tensor& a_in, const torch::Tensor& b_in) {
  const auto a = with_unit_last_stride(a_in), b = with_unit_last_stride(b_in);
  const int64_t batch = a.size(0), heads = a.size(1), m = a.size(2), n = b.size(2), dk = a.size(3);
  auto out = torch::empty({batch, heads, m, n}, a.options());
  if (out.numel() == 0 || dk == 0) return out.zero_();  // no slice to walk (null data pointers)
  const float* a_data = a.data_ptr<float>();
  const float* b_data = b.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  const auto transposed_slice_floats = static_cast<size_t>(dk * transposed_width(n));  // b's slice, transposed
  for_each_slice(batch, heads, m * n * dk, transposed_slice_floats, [&](int64_t i, int64_t h, float* scratch) {
    slice_dots(a_data + i * a.stride(0) + h * a.stride(1), a.stride(2), m, b_data + i * b.stride(0) + h * b.stride(1),
               b.stride(2), n, dk, out_data + (i * heads + h) * m * n, scratch);
  });
  return out;
}

// w [B, H, m, n] (transposed: [B, H, n, m], read as its transpose), b [B, H, n, dk] ->
// w b [B, H, m, dk], a view of [B, m, H, dk] memory.
torch::Tensor weighted_rows_product(const torch::Tensor& w, bool transposed, const torch::Tensor& b_in) {
  const auto b = with_unit_last_stride(b_in);
  const int64_t batch = b.size(0), heads = b.size(1), n = b.size(2), dk = b.size(3);
  const int64_t m = transposed ? w.size(3) : w.size(2);
  auto out = torch::empty({batch, m, heads, dk}, b.options());
  if (out.numel() == 0 || n == 0) return out.zero_().permute({0, 2, 1, 3});  // nothing to walk, or sums of nothing
  const int64_t w_row = transposed ? w.stride(3) : w.stride(2), w_column = transposed ? w.stride(2) : w.stride(3);
  const float* w_data = w.data_ptr<float>();
  const float* b_data = b.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  for_each_slice(batch, heads, m * n * dk, 0, [&](int64_t i, int64_t h, float*) {
    const WeightedSlice slice{w_data + i * w.stride(0) + h * w.stride(1),
                              w_row,
                              w_column,
                              m,
                              n,
                              b_data + i * b.stride(0) + h * b.stride(1),
                              b.stride(2),
                              dk,
                              out_data + (i * m * heads + h) * dk,
                              heads * dk};
    if (dk == 64)
      weighted_slice_64(slice);
    else
      weighted_slice_any(slice);
  });
  return out.permute({0, 2, 1, 3});
}

// scores = q k^T; grad q = grad k, grad k = grad^T q.
struct ScoresFunction : torch::autograd::Function<ScoresFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& query, const torch::Tensor& keys) {
    ctx->save_for_backward({query, keys});
    return row_dots(query, keys);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& grad = grads[0];
    torch::Tensor grad_query, grad_keys;
    if (ctx->needs_input_grad(0)) grad_query = weighted_rows_product(grad, false, saved[1]);
    if (ctx->needs_input_grad(1)) grad_keys = weighted_rows_product(grad, true, saved[0]);
    return {grad_query, grad_keys};
  }
};

// context = w v; grad w = grad v^T, grad v = w^T grad.
struct ContextFunction : torch::autograd::Function<ContextFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& weights, const torch::Tensor& values) {
    ctx->save_for_backward({weights, values});
    return weighted_rows_product(weights, false, values);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& grad = grads[0];
    torch::Tensor grad_weights, grad_values;
    if (ctx->needs_input_grad(0)) grad_weights = row_dots(grad, saved[1]);
    if (ctx->needs_input_grad(1)) grad_values = weighted_rows_product(saved[0], true, grad);
    return {grad_weights, grad_values};
  }
};

bool plain_float(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.dim() == 4 && t.stride(3) == 1;
}

std::string describe_sizes(const torch::Tensor& t) {
  if (!t.defined()) return "(undefined)";
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) text += (d ? ", " : "") + std::to_string(t.size(d));
  return text + "] " + std::string(c10::toString(t.scalar_type())) + (t.device().is_cpu() ? "" : " not on the CPU");
}

// The kernels read raw memory: a caller's shape error must not reach them.
void require_shapes(bool agree, const char* what, const torch::Tensor& left, const torch::Tensor& right) {
  if (!agree)
    throw Error(std::string("attention products: ") + what + " disagree: " + describe_sizes(left) + " and " +
                describe_sizes(right));
}

}  // namespace

bool attention_products_apply(const torch::Tensor& query, const torch::Tensor& keys, const torch::Tensor& values) {
  return plain_float(query) && plain_float(keys) && plain_float(values) && keys.sizes() == values.sizes() &&
         query.size(0) == keys.size(0) && query.size(1) == keys.size(1) && query.size(3) == keys.size(3);
}

torch::Tensor attention_scores(const torch::Tensor& query, const torch::Tensor& keys) {
  require_shapes(attention_products_apply(query, keys, keys), "query and keys", query, keys);
  return ScoresFunction::apply(query, keys);
}

bool attention_context_applies(const torch::Tensor& weights, const torch::Tensor& values) {
  return plain_float(weights) && plain_float(values) && weights.size(0) == values.size(0) &&
         weights.size(1) == values.size(1) && weights.size(3) == values.size(2);
}

torch::Tensor attention_context(const torch::Tensor& weights, const torch::Tensor& values) {
  require_shapes(attention_context_applies(weights, values), "weights and values", weights, values);
  return ContextFunction::apply(weights, values);
}

}  // namespace nmt
