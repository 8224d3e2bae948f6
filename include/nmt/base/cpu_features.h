#pragma once
// What the CPU can do, decided once per process, and the one switch that caps it:
// NMT_CPU_ISA=avx2 makes the project (and oneDNN, through ONEDNN_MAX_CPU_ISA) behave as
// on a CPU without AVX-512, so the AVX2 paths can be tested on an AVX-512 machine;
// NMT_CPU_ISA=baseline as on an x86-64 without AVX2 (oneDNN on SSE4.1). OpenBLAS reads
// only its own OPENBLAS_CORETYPE, before any of this runs. NMT_CPU_ISA=default (or unset)
// uses what the CPU has.
#include <string>

namespace nmt {

struct CpuFeatures {
  bool avx2 = false;
  bool avx512 = false;       ///< AVX512F
  bool avx512_vnni = false;  ///< int8 dot products without 16-bit intermediate sums
  bool avx512_bf16 = false;  ///< native bfloat16 dot products
  std::string cap;           ///< "" or the NMT_CPU_ISA (or ONEDNN_MAX_CPU_ISA) cap in force
};

/// The features of this CPU after the cap. Throws nmt::Error for an NMT_CPU_ISA value
/// other than avx2, baseline or default.
const CpuFeatures& cpu_features();

/// The instruction sets the project's own loops are compiled for (kernels/isa_versions.h).
enum class IsaLevel { baseline, avx2, avx512 };

/// The highest level cpu_features() allows: under NMT_CPU_ISA=avx2 the AVX2 code runs,
/// under NMT_CPU_ISA=baseline the baseline code.
IsaLevel isa_level();

/// The version that runs of a loop compiled up to `widest`: isa_level(), or `widest` below it.
IsaLevel dispatch_level(IsaLevel widest);

/// The version for dispatch_level() (avx512 null: compiled up to AVX2 only).
template <typename Function>
Function choose_version(Function avx512, Function avx2, Function baseline) {
  switch (dispatch_level(avx512 ? IsaLevel::avx512 : IsaLevel::avx2)) {
    case IsaLevel::avx512:
      return avx512;
    case IsaLevel::avx2:
      return avx2;
    case IsaLevel::baseline:
      break;
  }
  return baseline;
}

/// One line for --verbose and benchmarks: "avx2 (capped by NMT_CPU_ISA=avx2)", "avx512 vnni bf16".
std::string describe_cpu_features();

}  // namespace nmt
