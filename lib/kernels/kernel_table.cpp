#include "nmt/kernels/kernel_table.h"

#include <algorithm>

namespace nmt {
namespace {

// The widest version each kernel file compiles: NMT_ISA_VERSIONS reaches AVX-512,
// NMT_ISA_VERSIONS_TO_AVX2 stops at AVX2 (kernels/isa_versions.h). Elsewhere than on
// x86-64 with GCC each loop is compiled once, the baseline.
#if defined(__x86_64__) && defined(__GNUC__)
constexpr IsaLevel kAllVersions = IsaLevel::avx512;
constexpr IsaLevel kToAvx2 = IsaLevel::avx2;
#else
constexpr IsaLevel kAllVersions = IsaLevel::baseline;
constexpr IsaLevel kToAvx2 = IsaLevel::baseline;
#endif

struct Operation {
  const char* name;
  IsaLevel widest;
  const char* fallback;
};

// The operations of lib/kernels/ and where their callers take another way.
constexpr Operation kOperations[] = {
    {"vector max and sum", kAllVersions, "none: the CPU paths of the loss and the searches always run it"},
    {"vector exp sum", kAllVersions, "none: the CPU paths of the loss, the searches and attention always run it"},
    {"int8 input quantization", kAllVersions, "none: int8 inference needs it and oneDNN's int8 GEMM"},
    {"int8 dequantization", kAllVersions, "none: int8 inference needs it and oneDNN's int8 GEMM"},
    {"dropout mask", kAllVersions, "LibTorch's dropout (a model not computing in fp32 on the CPU)"},
    {"attention products", kAllVersions, "torch::matmul (a model not computing in fp32 on the CPU)"},
    {"single-query attention", kToAvx2,
     "the attention products after gathering the rows (every call but one query position per row without a gradient)"},
    {"best tokens", kAllVersions, "LibTorch's log_softmax and topk (a search over a model not on the CPU)"},
    {"smoothed cross-entropy", kAllVersions, "LibTorch's log_softmax, gather and sums (a run not on the CPU)"},
    {"Adam elements", kAllVersions,
     "torch::optim::Adam's step (amsgrad, or a parameter that is not dense fp32 on the CPU)"},
};

}  // namespace

std::string isa_level_name(IsaLevel level) {
  switch (level) {
    case IsaLevel::avx512: return "avx512";
    case IsaLevel::avx2: return "avx2";
    case IsaLevel::baseline: break;
  }
  return "baseline";
}

std::vector<KernelEntry> kernel_table() {
  std::vector<KernelEntry> table;
  for (const auto& operation : kOperations)
    table.push_back({operation.name, operation.widest, std::min(operation.widest, isa_level()), operation.fallback});
  return table;
}

std::vector<std::string> describe_kernel_table() {
  std::vector<std::string> lines;
  for (const auto& entry : kernel_table())
    lines.push_back(entry.operation + ": " + isa_level_name(entry.runs) + " (else " + entry.fallback + ")");
  return lines;
}

std::vector<std::string> describe_kernel_table(const c10::Device& device) {
  if (device.is_cpu()) return describe_kernel_table();
  std::vector<std::string> lines;
  for (const auto& operation : kOperations)
    lines.push_back(std::string(operation.name) + ": not on " + device.str() +
                    ", LibTorch's own operations there (the kernel reads CPU memory)");
  return lines;
}

}  // namespace nmt
