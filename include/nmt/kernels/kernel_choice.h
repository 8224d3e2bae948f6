#pragma once
// Whether the project's own CPU kernels or LibTorch's operations compute for a model, an
// optimizer or a search: decided once, from the device and dtype of what they hold, where
// they are set up (the Transformer's set-up and moves, the loss, FusedAdam, each search's
// start), never per call. The kernels read raw host memory: on CUDA (or any device but
// the CPU) only LibTorch's own operations can run.
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace nmt {

enum class KernelChoice { cpu_fp32, torch_ops };

/// cpu_fp32 for fp32 on the CPU, torch_ops for any other device or dtype.
KernelChoice kernel_choice_for(const c10::Device& device, c10::ScalarType dtype = c10::ScalarType::Float);

/// "the project's CPU kernels (fp32)" or "LibTorch's own operations", for --verbose.
std::string describe_kernel_choice(KernelChoice choice);

}  // namespace nmt
