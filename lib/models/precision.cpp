#include "nmt/models/precision.h"

#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/models/onednn_gemm.h"

namespace nmt {
namespace {

thread_local bool bf16_compute = false;

bool cpu_has_native_bf16() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

}  // namespace

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  throw Error("precision must be fp32 or bf16, got \"" + name + "\"");
}

std::string precision_name(Precision precision) {
  return precision == Precision::bf16 ? "bf16" : "fp32";
}

std::vector<std::string> precision_names() { return {"fp32", "bf16"}; }

bool precision_supported(Precision precision, const torch::Device& device) {
  if (precision != Precision::bf16 || !device.is_cpu()) return true;
  return cpu_has_native_bf16() && torch::hasMKLDNN();
}

Precision resolve_training_precision(const std::string& name, const std::string& arch,
                                     const torch::Device& device) {
  if (name == "auto") {
    // CUDA stays fp32 under auto: its bf16 path is untested here.
    const bool native = device.is_cpu() && precision_supported(Precision::bf16, device);
    return arch == "transformer" && native ? Precision::bf16 : Precision::fp32;
  }
  const auto precision = parse_precision(name);
  require_precision_support(precision, device);
  return precision;
}

void require_precision_support(Precision precision, const torch::Device& device) {
  if (precision != Precision::bf16 || !device.is_cpu()) return;
  if (!cpu_has_native_bf16())
    throw Error("bf16 needs a CPU with AVX512-BF16 (this one lacks it; it would run slower than "
                "fp32): use fp32");
  if (!torch::hasMKLDNN())
    throw Error("bf16 needs LibTorch built with oneDNN (MKL-DNN); this build has none: use fp32");
}

Bf16ComputeScope::Bf16ComputeScope(bool enabled) : previous_(bf16_compute) {
  bf16_compute = previous_ || enabled;
}

Bf16ComputeScope::~Bf16ComputeScope() { bf16_compute = previous_; }

bool computes_in_bf16(const torch::Tensor& weight) {
  return weight.scalar_type() == torch::kBFloat16 || (bf16_compute && weight.scalar_type() == torch::kFloat);
}

torch::Tensor linear_in_precision(const torch::Tensor& x, const torch::Tensor& weight,
                                  const torch::Tensor& bias) {
  constexpr auto kLow = torch::kBFloat16;
  if (weight.scalar_type() == kLow && x.scalar_type() != kLow)
    return torch::nn::functional::linear(x.to(kLow), weight, bias).to(x.scalar_type());
  if (bf16_compute && weight.scalar_type() == torch::kFloat) {
    const auto low_bias = bias.defined() ? bias.to(kLow) : bias;
    return torch::nn::functional::linear(x.to(kLow), weight.to(kLow), low_bias).to(x.scalar_type());
  }
  // Inference only: oneDNN's sgemm has no autograd (and training keeps the BLAS's sums).
  if (!torch::GradMode::is_enabled() && x.is_cpu() && x.scalar_type() == torch::kFloat &&
      weight.scalar_type() == torch::kFloat && onednn_fp32_gemm_enabled())
    return onednn_linear(x, weight, bias);
  return torch::nn::functional::linear(x, weight, bias);
}

}  // namespace nmt
