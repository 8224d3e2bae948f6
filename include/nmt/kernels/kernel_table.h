#pragma once
// Every operation the project computes with its own loops, in one table: which version of
// the loop runs in this process (the widest one compiled that isa_level() allows, so
// NMT_CPU_ISA counts) and what runs instead where the kernel does not apply. --verbose
// prints it (models/compute_description.h).
#include <c10/core/Device.h>

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

/// One entry per operation of lib/kernels/, in a fixed order.
std::vector<KernelEntry> kernel_table();

/// "avx512", "avx2", "baseline".
std::string isa_level_name(IsaLevel level);

/// One line per operation for --verbose: "attention products: avx2 (else torch::matmul ...)".
std::vector<std::string> describe_kernel_table();

/// The same for a model on `device`: describe_kernel_table() on the CPU; elsewhere (CUDA)
/// one line per operation saying that LibTorch's own operations compute it there.
std::vector<std::string> describe_kernel_table(const c10::Device& device);

}  // namespace nmt
