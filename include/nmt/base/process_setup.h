#pragma once
// What a process of the project sets before anything else runs: each tool's main, the
// tests' main and the fuzz harnesses call set_up_process() first.
namespace nmt {

/// Applies the NMT_CPU_ISA cap (base/cpu_features.h) to the libraries: sets
/// ONEDNN_MAX_CPU_ISA to the matching level where it is not set (oneDNN reads it once, at
/// its first dispatch, so this must come before any LibTorch operation), and turns
/// LibTorch's own oneDNN paths off under any cap below AVX-512: they choose bf16 kernels by
/// the CPU, not by the cap, and a capped oneDNN cannot build them ("could not create a
/// primitive descriptor"), so under a cap LibTorch runs without oneDNN, as it does on a
/// CPU without AVX-512. Calling it again changes nothing. Never throws: an NMT_CPU_ISA
/// value cpu_features() refuses is reported by cpu_features().
void set_up_process();

}  // namespace nmt
