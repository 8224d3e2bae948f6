#include "nmt/models/onednn_gemm.h"

#include <torch/torch.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "nmt/base/error.h"
#include "onednn_functions.h"

namespace nmt {
namespace {

// Row-major C = alpha op(A) op(B) + beta C.
using SgemmFunction = decltype(&dnnl_sgemm);

SgemmFunction find_sgemm() {
  const char* choice = std::getenv("NMT_FP32_GEMM");
  if (choice && std::strcmp(choice, "blas") == 0) return nullptr;
  return reinterpret_cast<SgemmFunction>(find_onednn_function("dnnl_sgemm"));
}

std::atomic<int64_t> calls{0};

SgemmFunction sgemm() {
  static const SgemmFunction function = find_sgemm();
  return function;
}

// oneDNN's sgemm reads host memory: a model moved off the CPU must be set up again
// (inference_path, training_path), not keep a CPU path.
void require_cpu(const torch::Tensor& t, const char* operation) {
  if (!t.device().is_cpu())
    throw Error(std::string(operation) + ": oneDNN's fp32 GEMM runs on the CPU only, got a tensor on " +
                t.device().str() + " (set the model's Linear path up again after moving it)");
}

}  // namespace

bool onednn_fp32_gemm_enabled() { return sgemm() != nullptr; }

int64_t onednn_linear_calls() { return calls.load(std::memory_order_relaxed); }

torch::Tensor output_rows_with_bias(const torch::Tensor& bias, int64_t rows, int64_t out,
                                    const torch::TensorOptions& options) {
  auto y = torch::empty({rows, out}, options);
  // A fresh buffer: expand().contiguous() of one row would alias the bias itself.
  if (bias.defined()) y.copy_(bias.expand({rows, out}));
  return y;
}

torch::Tensor onednn_linear(const torch::Tensor& x, const torch::Tensor& weight,
                            const torch::Tensor& bias) {
  require_cpu(x, "onednn_linear");
  const auto a = x.contiguous();
  const auto w = weight.contiguous();
  const std::int64_t rows = a.size(0), in = a.size(1), out = w.size(0);
  if (w.size(1) != in)
    throw Error("onednn_linear: input has " + std::to_string(in) + " features, weight expects " +
                std::to_string(w.size(1)));
  auto y = output_rows_with_bias(bias, rows, out, a.options());
  const float beta = bias.defined() ? 1.0f : 0.0f;  // the product is added to the bias rows
  if (rows == 0) return y;
  calls.fetch_add(1, std::memory_order_relaxed);
  const dnnl_status_t status = sgemm()('N', 'T', rows, out, in, 1.0f, a.data_ptr<float>(), in,
                                       w.data_ptr<float>(), in, beta, y.data_ptr<float>(), out);
  if (status != dnnl_success)
    throw Error("oneDNN sgemm failed with status " + std::to_string(static_cast<int>(status)));
  return y;
}

torch::Tensor onednn_matmul(const torch::Tensor& a, bool transpose_a, const torch::Tensor& b, bool transpose_b) {
  require_cpu(a, "onednn_matmul");
  const auto left = a.contiguous(), right = b.contiguous();
  const std::int64_t rows = transpose_a ? left.size(1) : left.size(0);
  const std::int64_t inner = transpose_a ? left.size(0) : left.size(1);
  const std::int64_t cols = transpose_b ? right.size(0) : right.size(1);
  if ((transpose_b ? right.size(1) : right.size(0)) != inner)
    throw Error("onednn_matmul: inner sizes differ (" + std::to_string(inner) + " and " +
                std::to_string(transpose_b ? right.size(1) : right.size(0)) + ")");
  auto product = torch::empty({rows, cols}, left.options());
  if (rows == 0 || cols == 0) return product;
  if (inner == 0) return product.zero_();
  calls.fetch_add(1, std::memory_order_relaxed);
  const dnnl_status_t status =
      sgemm()(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', rows, cols, inner, 1.0f, left.data_ptr<float>(),
              left.size(1), right.data_ptr<float>(), right.size(1), 0.0f, product.data_ptr<float>(), cols);
  if (status != dnnl_success)
    throw Error("oneDNN sgemm failed with status " + std::to_string(static_cast<int>(status)));
  return product;
}

}  // namespace nmt
