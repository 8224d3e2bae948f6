#pragma once
// What the CPU can do, decided once per process, and the one switch that caps it:
// NMT_CPU_ISA=avx2 makes the project (and oneDNN, through ONEDNN_MAX_CPU_ISA) behave as
// on a CPU without AVX-512, so the AVX2 paths can be tested on an AVX-512 machine.
// NMT_CPU_ISA=default (or unset) uses what the CPU has.
#include <string>

// Function clones per x86 instruction set, chosen by the loader (GCC's target_clones);
// elsewhere (aarch64) one plain function. The clones compute the same operations in the
// same order, so they cannot change results, only speed.
#if defined(__x86_64__) && defined(__GNUC__)
#define NMT_X86_CLONES(...) __attribute__((target_clones(__VA_ARGS__)))
#else
#define NMT_X86_CLONES(...)
#endif

namespace nmt {

struct CpuFeatures {
  bool avx2 = false;
  bool avx512 = false;       ///< AVX512F
  bool avx512_vnni = false;  ///< int8 dot products without 16-bit intermediate sums
  bool avx512_bf16 = false;  ///< native bfloat16 dot products
  std::string cap;           ///< "" or the NMT_CPU_ISA (or ONEDNN_MAX_CPU_ISA) cap in force
};

/// The features of this CPU after the cap. Throws nmt::Error for an NMT_CPU_ISA value
/// other than avx2 or default.
const CpuFeatures& cpu_features();

/// One line for --verbose and benchmarks: "avx2 (capped by NMT_CPU_ISA=avx2)", "avx512 vnni bf16".
std::string describe_cpu_features();

}  // namespace nmt
