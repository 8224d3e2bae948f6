#pragma once
// Every operation the project computes with its own loops, in one table: which version of
// the loop runs in this process (dispatch_level() of the widest one compiled: what the
// dispatch itself picks, so NMT_CPU_ISA counts) and what runs instead where the kernel does
// not apply. Each kernel file puts its operations in it (NMT_KERNEL_TABLE_ENTRY in
// isa_versions.h, from its dispatch families' own levels); --verbose prints it
// (models/compute_description.h).
#include <c10/core/Device.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "nmt/base/cpu_features.h"

namespace nmt {

struct KernelEntry {
  std::string operation;  ///< "attention products", "smoothed cross-entropy", ...
  IsaLevel widest;        ///< the widest instruction set the loop is compiled for
  IsaLevel runs;          ///< the version this process runs: widest, capped by isa_level()
  std::string fallback;   ///< what computes the operation where the kernel does not apply
};

/// Registers an operation (NMT_KERNEL_TABLE_ENTRY): `families` are the widest levels of the
/// dispatch families it runs through. Each name once: the kernel table's test checks it.
struct KernelRegistration {
  KernelRegistration(const char* operation, const char* fallback, std::initializer_list<IsaLevel> families);
};

/// One entry per operation of lib/kernels/, by name.
std::vector<KernelEntry> kernel_table();

/// "avx512", "avx2", "baseline".
std::string isa_level_name(IsaLevel level);

/// One line per operation for --verbose: "attention products: avx2 (else torch::matmul ...)".
std::vector<std::string> describe_kernel_table();

/// The same for a model on `device`: describe_kernel_table() on the CPU; elsewhere (CUDA)
/// one line per operation saying that LibTorch's own operations compute it there.
std::vector<std::string> describe_kernel_table(const c10::Device& device);

}  // namespace nmt
