#include "nmt/kernels/kernel_choice.h"

namespace nmt {

KernelChoice kernel_choice_for(const c10::Device& device, c10::ScalarType dtype) {
  return device.is_cpu() && dtype == c10::ScalarType::Float ? KernelChoice::cpu_fp32 : KernelChoice::torch_ops;
}

std::string describe_kernel_choice(KernelChoice choice) {
  return choice == KernelChoice::cpu_fp32 ? "the project's CPU kernels (fp32)" : "LibTorch's own operations";
}

}  // namespace nmt
