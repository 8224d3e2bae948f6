#pragma once
// What the CPU can do, decided once per process, and the one switch that caps it:
// NMT_CPU_ISA=avx2 makes the project (and oneDNN, through ONEDNN_MAX_CPU_ISA) behave as
// on a CPU without AVX-512, so the AVX2 paths can be tested on an AVX-512 machine;
// NMT_CPU_ISA=baseline as on an x86-64 without AVX2 (oneDNN on SSE4.1). OpenBLAS reads
// only its own OPENBLAS_CORETYPE, before any of this runs. NMT_CPU_ISA=default (or unset)
// uses what the CPU has.
#include <string>
#include <utility>

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

/// The instruction sets the project's own loops are compiled for (NMT_ISA_VERSIONS).
enum class IsaLevel { baseline, avx2, avx512 };

/// The highest level cpu_features() allows: under NMT_CPU_ISA=avx2 the AVX2 code runs,
/// under NMT_CPU_ISA=baseline the baseline code.
IsaLevel isa_level();

/// The version for isa_level(), or the highest one below it that was compiled.
template <typename Function>
Function choose_version(Function avx512, Function avx2, Function baseline) {
  switch (isa_level()) {
    case IsaLevel::avx512:
      return avx512 ? avx512 : avx2;
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

// NMT_ISA_VERSIONS(name, body) defines `name`, a function template that runs `body` (an
// always-inline function, so that it is compiled again inside each version) compiled for
// AVX-512, for AVX2 and for any x86-64, whichever isa_level() chose at its first call.
// (GCC's target_clones pick by the CPU alone, at load time: NMT_CPU_ISA=avx2 could not
// reach them, so capped runs kept the AVX-512 code.) NMT_ISA_VERSIONS_TO_AVX2 stops at
// AVX2. Every version computes the same operations in the same order (the library is
// compiled with -ffp-contract=off: no fused multiply-adds in one version only), so the
// choice changes speed, never results. Elsewhere (aarch64) `name` calls `body`.
#if defined(__x86_64__) && defined(__GNUC__)
#define NMT_ISA_VERSION_(name, suffix, target_attribute, body)      \
  template <typename... Args>                                       \
  target_attribute decltype(auto) name##_##suffix(Args&&... args) { \
    return body(std::forward<Args>(args)...);                       \
  }
#define NMT_ISA_DISPATCH_(name, avx512)                                                           \
  template <typename... Args>                                                                     \
  decltype(auto) name(Args&&... args) {                                                           \
    using Version = decltype(&name##_baseline<Args...>);                                          \
    static const Version chosen =                                                                 \
        ::nmt::choose_version<Version>(avx512, &name##_avx2<Args...>, &name##_baseline<Args...>); \
    return chosen(std::forward<Args>(args)...);                                                   \
  }
#define NMT_ISA_VERSIONS(name, body)                                       \
  NMT_ISA_VERSION_(name, avx512, __attribute__((target("avx512f"))), body) \
  NMT_ISA_VERSION_(name, avx2, __attribute__((target("avx2"))), body)      \
  NMT_ISA_VERSION_(name, baseline, , body)                                 \
  NMT_ISA_DISPATCH_(name, &name##_avx512<Args...>)
#define NMT_ISA_VERSIONS_TO_AVX2(name, body)                          \
  NMT_ISA_VERSION_(name, avx2, __attribute__((target("avx2"))), body) \
  NMT_ISA_VERSION_(name, baseline, , body)                            \
  NMT_ISA_DISPATCH_(name, nullptr)
#else
#define NMT_ISA_VERSIONS(name, body)          \
  template <typename... Args>                 \
  decltype(auto) name(Args&&... args) {       \
    return body(std::forward<Args>(args)...); \
  }
#define NMT_ISA_VERSIONS_TO_AVX2(name, body) NMT_ISA_VERSIONS(name, body)
#endif
