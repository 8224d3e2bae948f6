#include "nmt/models/linear_path.h"

#include "nmt/base/cpu_features.h"
#include "nmt/base/error.h"
#include "nmt/models/onednn_amx_weight.h"
#include "nmt/models/onednn_gemm.h"
#include "nmt/models/onednn_packed_weight.h"

namespace nmt {
namespace {

// The widest vector instructions the project lets oneDNN use (NMT_CPU_ISA caps it).
std::string vector_isa() {
  const auto& cpu = cpu_features();
  return cpu.avx512 ? "AVX-512" : cpu.avx2 ? "AVX2" : "SSE4.1";
}

// Where oneDNN runs the product on AMX: the packed matmul and the implementation it runs.
std::string describe_amx(AmxProduct product) {
  return "oneDNN matmul " + amx_probe(product) + " over weights packed once (AMX; one primitive per row count)";
}

std::string describe_int8() {
  // The weights' range follows the CPU: int8_linear.cpp says why.
  if (onednn_amx_enabled(AmxProduct::int8))
    return "int8, weights quantized once (8-bit, per output row), inputs per row at each call; " +
           describe_amx(AmxProduct::int8);
  return cpu_features().avx512_vnni
             ? "int8, weights quantized once (8-bit, per output row), inputs per row at each call; oneDNN "
               "u8s8s32 GEMM (AVX512-VNNI)"
             : "int8, weights quantized once (7-bit, per output row), inputs per row at each call; oneDNN "
               "u8s8s32 GEMM (" + vector_isa() + " without VNNI)";
}

// The paths off the CPU: LibTorch's linear on the tensors' device (cuBLAS on CUDA).
std::string describe_device_linear_path(LinearPath path, const torch::Device& device) {
  const std::string library = "LibTorch linear on " + device.str() + (device.is_cuda() ? " (cuBLAS)" : "");
  switch (path) {
    case LinearPath::fp32_torch: return "fp32, " + library;
    case LinearPath::bf16_mixed:
      return "bf16 products of fp32 weights cast at every forward (mixed precision), " + library;
    case LinearPath::bf16_weights: return "bf16, weights converted once, " + library;
    case LinearPath::fp32_onednn:
    case LinearPath::fp32_packed:
    case LinearPath::int8: break;
  }
  return linear_path_name(path) + " reads host memory and cannot run on " + device.str();
}

}  // namespace

std::string linear_path_name(LinearPath path) {
  switch (path) {
    case LinearPath::fp32_torch: return "fp32_torch";
    case LinearPath::fp32_onednn: return "fp32_onednn";
    case LinearPath::fp32_packed: return "fp32_packed";
    case LinearPath::bf16_mixed: return "bf16_mixed";
    case LinearPath::bf16_weights: return "bf16_weights";
    case LinearPath::int8: return "int8";
  }
  return "unknown";
}

std::string describe_linear_path(LinearPath path, const torch::Device& device) {
  if (!device.is_cpu()) return describe_device_linear_path(path, device);
  switch (path) {
    case LinearPath::fp32_torch: return "fp32, LibTorch linear (BLAS)";
    case LinearPath::fp32_onednn: return "fp32, oneDNN sgemm (" + vector_isa() + ")";
    case LinearPath::fp32_packed:
      return "fp32, weights packed once, oneDNN matmul (" + vector_isa() + "; " + describe_packed_rows() + ")";
    case LinearPath::bf16_mixed:
      return "bf16 products of fp32 weights cast at every forward (mixed precision), LibTorch's oneDNN bf16 GEMM "
             "(AVX512-BF16)";
    case LinearPath::bf16_weights:
      if (onednn_amx_enabled(AmxProduct::bf16)) return "bf16, weights converted once, " + describe_amx(AmxProduct::bf16);
      return "bf16, weights converted once, LibTorch's oneDNN bf16 GEMM (AVX512-BF16)";
    case LinearPath::int8: return describe_int8();
  }
  return "unknown";
}

bool converts_weights(LinearPath path) { return path == LinearPath::bf16_weights || path == LinearPath::int8; }

bool computes_in_bf16(LinearPath path) { return path == LinearPath::bf16_mixed || path == LinearPath::bf16_weights; }

// oneDNN's fp32 sgemm where the CPU has AVX-512: at a training step's shapes it ran at
// 2.0x OpenBLAS's rate on Zen 5 (OpenBLAS on its AVX2 kernels, OPENBLAS_CORETYPE=Haswell),
// but at 0.9x with AVX2 alone (its weight-gradient products are the slow ones), where the
// BLAS stays (bench/gemm_rate.cpp, bench/RESULTS.md).
LinearPath fp32_training_path(const torch::Device& device) {
  return device.is_cpu() && cpu_features().avx512 && onednn_fp32_gemm_enabled() ? LinearPath::fp32_onednn
                                                                                 : LinearPath::fp32_torch;
}

LinearPath inference_path(Precision precision, const torch::Device& device, WeightUpdates updates) {
  require_precision_support(precision, device);
  switch (precision) {
    case Precision::bf16: return LinearPath::bf16_weights;
    case Precision::int8: return LinearPath::int8;
    case Precision::fp32: break;
  }
  if (!device.is_cpu()) return LinearPath::fp32_torch;
  if (updates == WeightUpdates::none && onednn_packed_weights_enabled()) return LinearPath::fp32_packed;
  return onednn_fp32_gemm_enabled() ? LinearPath::fp32_onednn : LinearPath::fp32_torch;
}

LinearPath training_path(Precision precision, const torch::Device& device) {
  switch (precision) {
    case Precision::fp32: return fp32_training_path(device);
    case Precision::bf16: return LinearPath::bf16_mixed;
    case Precision::int8: break;
  }
  throw Error("int8 is for inference only: train in fp32 or bf16");
}

}  // namespace nmt
