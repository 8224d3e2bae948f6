#include "nmt/models/onednn_gemm.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "nmt/base/error.h"

namespace nmt {
namespace {

// oneDNN's C API (dnnl.h, stable since 1.0): row-major C = alpha op(A) op(B) + beta C.
// The return value is dnnl_status_t, 0 on success.
using SgemmFunction = int (*)(char transa, char transb, std::int64_t m, std::int64_t n,
                              std::int64_t k, float alpha, const float* a, std::int64_t lda,
                              const float* b, std::int64_t ldb, float beta, float* c,
                              std::int64_t ldc);

SgemmFunction find_sgemm() {
  const char* choice = std::getenv("NMT_FP32_GEMM");
  if (choice && std::strcmp(choice, "blas") == 0) return nullptr;
  // RTLD_DEFAULT: libdnnl.so.2 is in the global scope as a dependency of libtorch_cpu.
  return reinterpret_cast<SgemmFunction>(dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
}

std::atomic<int64_t> calls{0};

SgemmFunction sgemm() {
  static const SgemmFunction function = find_sgemm();
  return function;
}

}  // namespace

bool onednn_fp32_gemm_enabled() { return sgemm() != nullptr; }

int64_t onednn_linear_calls() { return calls.load(std::memory_order_relaxed); }

torch::Tensor onednn_linear(const torch::Tensor& x, const torch::Tensor& weight,
                            const torch::Tensor& bias) {
  const auto a = x.contiguous();
  const auto w = weight.contiguous();
  const std::int64_t rows = a.size(0), in = a.size(1), out = w.size(0);
  if (w.size(1) != in)
    throw Error("onednn_linear: input has " + std::to_string(in) + " features, weight expects " +
                std::to_string(w.size(1)));
  auto y = torch::empty({rows, out}, a.options());
  float beta = 0.0f;
  if (bias.defined()) {
    // A fresh buffer: expand().contiguous() of one row would alias the bias itself.
    y.copy_(bias.expand({rows, out}));
    beta = 1.0f;  // the product is added to the bias rows
  }
  if (rows == 0) return y;
  calls.fetch_add(1, std::memory_order_relaxed);
  const int status = sgemm()('N', 'T', rows, out, in, 1.0f, a.data_ptr<float>(), in,
                             w.data_ptr<float>(), in, beta, y.data_ptr<float>(), out);
  if (status != 0) throw Error("oneDNN sgemm failed with status " + std::to_string(status));
  return y;
}

}  // namespace nmt
