#include "nmt/models/onednn_packed_weight.h"

#include <torch/types.h>

#include <cstdlib>
#include <cstring>

#include "nmt/base/error.h"
#include "nmt/models/onednn_gemm.h"
#include "onednn_primitives.h"

namespace nmt {
namespace {

using namespace onednn;

bool choose_packed() {
  const char* choice = std::getenv("NMT_FP32_GEMM");
  if (choice && (std::strcmp(choice, "blas") == 0 || std::strcmp(choice, "sgemm") == 0)) return false;
  return primitives_available() && onednn_fp32_gemm_enabled();  // sgemm computes the rows outside the window
}

}  // namespace

bool onednn_packed_weights_enabled() {
  static const bool enabled = choose_packed();
  return enabled;
}

namespace {

// `weight` as the packed product reads it, once it is what that product takes.
torch::Tensor checked_weight(const torch::Tensor& weight) {
  if (!onednn_packed_weights_enabled()) throw Error("oneDNN's matmul primitive was not found in the loaded oneDNN");
  if (weight.dim() != 2 || weight.scalar_type() != torch::kFloat32 || !weight.device().is_cpu())
    throw Error("a packed oneDNN weight is a 2-D fp32 tensor on the CPU");
  return weight.detach().contiguous();
}

// The matmul for any row count (a run-time dimension), the weights' layout left to
// oneDNN ("any"). With a bias, the product is summed onto rows that hold it (the sum
// post-op), as sgemm's beta 1 does.
PrimitiveDesc any_rows_matmul(int64_t in, int64_t out, bool with_bias) {
  const MatrixDesc source(DNNL_RUNTIME_DIM_VAL, in, dnnl_f32, dnnl_ab),
      any_weights(in, out, dnnl_f32, dnnl_format_tag_any), destination(DNNL_RUNTIME_DIM_VAL, out, dnnl_f32, dnnl_ab);
  const AccumulatingAttr accumulate;
  return matmul_desc(source.get(), any_weights.get(), nullptr, destination.get(),
                     with_bias ? accumulate.get() : nullptr);
}

}  // namespace

// The primitive and the weight packed into the layout it chose.
struct OnednnPackedWeight::Handles {
  Handles(MemoryDescRef plain, void* weight, int64_t in, int64_t out, bool with_bias)
      : matmul_desc(any_rows_matmul(in, out, with_bias)),
        matmul(matmul_desc),
        packed(packed_copy(plain, weight, matmul_desc.weights())) {}
  PrimitiveDesc matmul_desc;
  Primitive matmul;
  Memory packed;
};

OnednnPackedWeight::OnednnPackedWeight(const torch::Tensor& weight, const torch::Tensor& bias)
    : weight_(checked_weight(weight)),
      bias_(bias.defined() ? bias.detach().contiguous() : bias),
      in_(weight_.size(1)),
      out_(weight_.size(0)) {
  const MatrixDesc plain(in_, out_, dnnl_f32, dnnl_ba);
  onednn_ = std::make_unique<Handles>(plain.get(), weight_.data_ptr(), in_, out_, bias_.defined());
  implementation_ = onednn_->matmul_desc.implementation();
}

OnednnPackedWeight::~OnednnPackedWeight() = default;

// The window where the packed product measured faster than sgemm (the header says how).
constexpr int64_t kFewestPackedRows = 16, kMostPackedRows = 1024, kWideWeight = 4096;

std::string describe_packed_rows() {
  return std::to_string(kFewestPackedRows) + " to " + std::to_string(kMostPackedRows) + " rows (from 2 for " +
         std::to_string(kWideWeight) + " outputs or more), sgemm for the others";
}

bool OnednnPackedWeight::packs_for(int64_t rows) const {
  if (rows > kMostPackedRows) return false;
  return rows >= kFewestPackedRows || (rows > 1 && out_ >= kWideWeight);
}

torch::Tensor OnednnPackedWeight::apply(const torch::Tensor& x) const {
  if (x.dim() != 2 || x.size(1) != in_ || x.scalar_type() != torch::kFloat32 || !x.device().is_cpu())
    throw Error("packed oneDNN linear: expected fp32 [rows, " + std::to_string(in_) + "] on the CPU, got " +
                std::to_string(x.dim()) + "-D [" + (x.dim() == 2 ? std::to_string(x.size(1)) : "?") + " features]");
  const auto a = x.contiguous();
  const int64_t rows = a.size(0);
  if (!packs_for(rows)) return onednn_linear(a, weight_, bias_);
  auto y = output_rows_with_bias(bias_, rows, out_, a.options());  // summed onto, as sgemm does
  if (rows == 0) return y;
  const MatrixDesc source(rows, in_, dnnl_f32, dnnl_ab), destination(rows, out_, dnnl_f32, dnnl_ab);
  const Memory source_memory(source.get(), a.data_ptr()), destination_memory(destination.get(), y.data_ptr());
  run(onednn_->matmul,
      {{DNNL_ARG_SRC, source_memory.get()}, {DNNL_ARG_WEIGHTS, onednn_->packed.get()},
       {DNNL_ARG_DST, destination_memory.get()}},
      "packed matmul");
  return y;
}

}  // namespace nmt
