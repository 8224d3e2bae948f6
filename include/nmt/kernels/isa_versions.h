#pragma once
// How a kernel is compiled once per instruction set and which version runs: the one that
// isa_level() (base/cpu_features.h, after the NMT_CPU_ISA cap) allows.
#include <utility>

#include "nmt/base/cpu_features.h"
#include "nmt/kernels/kernel_table.h"

// NMT_ISA_VERSIONS(name, body) defines `name`, a function template that runs `body` (an
// always-inline function, so that it is compiled again inside each version) compiled for
// AVX-512, for AVX2 and for any x86-64, whichever isa_level() chose at its first call.
// (GCC's target_clones pick by the CPU alone, at load time: NMT_CPU_ISA=avx2 could not
// reach them, so capped runs kept the AVX-512 code.) NMT_ISA_VERSIONS_TO_AVX2 stops at
// AVX2. Every version computes the same operations in the same order (the library is
// compiled with -ffp-contract=off: no fused multiply-adds in one version only), so the
// choice changes speed, never results. Elsewhere (aarch64) `name` calls `body`.
//
// Each also defines `name_widest`, the widest version compiled (an IsaLevel), which the
// kernel table (kernel_table.h) reads through NMT_KERNEL_TABLE_ENTRY: the table says what
// the dispatch compiled and, by dispatch_level(), which version it runs.
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
  NMT_ISA_DISPATCH_(name, &name##_avx512<Args...>)                         \
  [[maybe_unused]] constexpr ::nmt::IsaLevel name##_widest = ::nmt::IsaLevel::avx512;
#define NMT_ISA_VERSIONS_TO_AVX2(name, body)                          \
  NMT_ISA_VERSION_(name, avx2, __attribute__((target("avx2"))), body) \
  NMT_ISA_VERSION_(name, baseline, , body)                            \
  NMT_ISA_DISPATCH_(name, nullptr)                                    \
  [[maybe_unused]] constexpr ::nmt::IsaLevel name##_widest = ::nmt::IsaLevel::avx2;
#else
#define NMT_ISA_VERSIONS(name, body)          \
  template <typename... Args>                 \
  decltype(auto) name(Args&&... args) {       \
    return body(std::forward<Args>(args)...); \
  }                                           \
  [[maybe_unused]] constexpr ::nmt::IsaLevel name##_widest = ::nmt::IsaLevel::baseline;
#define NMT_ISA_VERSIONS_TO_AVX2(name, body) NMT_ISA_VERSIONS(name, body)
#endif

// Puts an operation in the kernel table, at load: its name, what runs where the kernel does
// not apply, and the `name_widest` of each NMT_ISA_VERSIONS family it dispatches through
// (the narrowest of them is the operation's). Beside the families, in their file.
#define NMT_KERNEL_TABLE_CONCAT_(a, b) a##b
#define NMT_KERNEL_TABLE_NAME_(counter) NMT_KERNEL_TABLE_CONCAT_(kernel_table_entry_, counter)
#define NMT_KERNEL_TABLE_ENTRY(operation, fallback, ...) \
  const ::nmt::KernelRegistration NMT_KERNEL_TABLE_NAME_(__COUNTER__)(operation, fallback, {__VA_ARGS__});
