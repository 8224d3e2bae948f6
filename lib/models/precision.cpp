#include "nmt/models/precision.h"

#include <torch/torch.h>

#include "nmt/base/cpu_features.h"
#include "nmt/base/device.h"
#include "nmt/base/error.h"
#include "nmt/models/int8_linear.h"

namespace nmt {
namespace {

bool cpu_has_native_bf16() { return cpu_features().avx512_bf16; }

// int8 runs where oneDNN has an int8 GEMM that pays: AVX512-VNNI, or AVX2 with 7-bit
// weights (int8_linear.cpp); their speeds are in bench/RESULTS.md. AVX-VNNI (256-bit) was
// not tried.
bool cpu_runs_int8() { return cpu_features().avx512_vnni || cpu_features().avx2; }

// Why the CPU lacks a feature: `lacking` as found, or the cap that hides it.
std::string cpu_lacks(const std::string& lacking) {
  const auto& cap = cpu_features().cap;
  return cap.empty() ? lacking : "capped by " + cap;
}

// Why `precision` cannot run (well) on `device`, or "" when it can: the one place both
// precision_supported() and require_precision_support() ask.
std::string unsupported_reason(Precision precision, const torch::Device& device) {
  switch (precision) {
    case Precision::fp32: return "";
    case Precision::bf16:
      if (!device.is_cpu())
        return cuda_supports_bf16(device)
                   ? ""
                   : "bf16 on " + device.str() + " needs a GPU of compute capability 8.0 or later (Ampere, Hopper) "
                     "and a LibTorch built with CUDA's headers: use fp32";
      if (!cpu_has_native_bf16())
        return "bf16 needs a CPU with AVX512-BF16 (" + cpu_lacks("this one lacks it") +
               "; it would run slower than fp32): use fp32";
      if (!torch::hasMKLDNN()) return "bf16 needs LibTorch built with oneDNN (MKL-DNN); this build has none: use fp32";
      return "";
    case Precision::int8:
      if (!device.is_cpu()) return "int8 inference runs on the CPU only: use fp32 or bf16 on " + device.str();
      if (!cpu_runs_int8())
        return "int8 needs a CPU with AVX2 or AVX512-VNNI (" + cpu_lacks("this one has neither") + "): use fp32";
      if (!onednn_int8_gemm_available())
        return "int8 needs oneDNN's int8 GEMM (dnnl_gemm_u8s8s32), not found in this LibTorch: use fp32";
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
    // bf16 where the device multiplies it natively: a CPU with AVX512-BF16, a CUDA GPU of
    // compute capability 8.0+. Either way the same bf16_mixed path: fp32 master weights and
    // loss (linear_path.h says why our own casts rather than autocast).
    return precision_supported(Precision::bf16, device) ? Precision::bf16 : Precision::fp32;
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

}  // namespace nmt
