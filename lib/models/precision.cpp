#include "nmt/models/precision.h"

#include <torch/torch.h>

#include "nmt/base/cpu_features.h"
#include "nmt/base/error.h"
#include "nmt/models/int8_linear.h"
#include "nmt/models/onednn_gemm.h"

namespace nmt {
namespace {

thread_local bool bf16_compute = false;

bool cpu_has_native_bf16() { return cpu_features().avx512_bf16; }

// int8 runs where oneDNN has an int8 GEMM that pays: AVX512-VNNI (1.5x fp32's beam-5
// speed), or AVX2 with 7-bit weights (1.15x, int8_linear.cpp). AVX-VNNI (256-bit) was not tried.
bool cpu_runs_int8() { return cpu_features().avx512_vnni || cpu_features().avx2; }

// Why `precision` cannot run (well) on `device`, or "" when it can: the one place both
// precision_supported() and require_precision_support() ask.
std::string unsupported_reason(Precision precision, const torch::Device& device) {
  switch (precision) {
    case Precision::fp32: return "";
    case Precision::bf16:
      if (!device.is_cpu()) return "";  // CUDA: accepted unchecked (untested)
      if (!cpu_has_native_bf16())
        return "bf16 needs a CPU with AVX512-BF16 (this one lacks it; it would run slower than fp32): use fp32";
      if (!torch::hasMKLDNN()) return "bf16 needs LibTorch built with oneDNN (MKL-DNN); this build has none: use fp32";
      return "";
    case Precision::int8:
      if (!device.is_cpu()) return "int8 inference runs on the CPU only: use fp32 or bf16 on " + device.str();
      if (!cpu_runs_int8()) return "int8 needs a CPU with AVX2 or AVX512-VNNI (this one has neither): use fp32";
      if (!onednn_int8_gemm_available())
        return "int8 needs oneDNN's int8 GEMM (dnnl_gemm_s8s8s32), not found in this LibTorch: use fp32";
      return "";
  }
  return "unknown precision";
}

}  // namespace

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  if (name == "int8") return Precision::int8;
  throw Error("precision must be fp32, bf16 or int8, got \"" + name + "\"");
}

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::bf16: return "bf16";
    case Precision::int8: return "int8";
    case Precision::fp32: break;
  }
  return "fp32";
}

std::vector<std::string> precision_names() { return {"fp32", "bf16", "int8"}; }

bool precision_supported(Precision precision, const torch::Device& device) {
  return unsupported_reason(precision, device).empty();
}

Precision resolve_training_precision(const std::string& name, const torch::Device& device) {
  if (name == "auto") {
    // CUDA stays fp32 under auto: its bf16 path is untested here.
    const bool native = device.is_cpu() && precision_supported(Precision::bf16, device);
    return native ? Precision::bf16 : Precision::fp32;
  }
  const auto precision = parse_precision(name);
  if (precision == Precision::int8)
    throw Error("train.precision int8: int8 is for inference only (nmt-translate --precision int8); "
                "train in fp32, bf16 or auto");
  require_precision_support(precision, device);
  return precision;
}

void require_precision_support(Precision precision, const torch::Device& device) {
  const auto reason = unsupported_reason(precision, device);
  if (!reason.empty()) throw Error(reason);
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
  if (weight.is_quantized()) return int8_linear(x, weight, bias).to(x.scalar_type());
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

torch::Tensor apply_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (x.dim() == 2) return linear_in_precision(x, weight, bias);
  auto sizes = x.sizes().vec();
  auto flat = linear_in_precision(x.reshape({-1, sizes.back()}), weight, bias);
  sizes.back() = flat.size(1);
  return flat.view(sizes);
}

torch::Tensor apply_linear(torch::nn::Linear& linear, const torch::Tensor& x) {
  return apply_linear(x, linear->weight, linear->bias);
}

}  // namespace nmt
