// Which computes, the project's CPU kernels or LibTorch's own operations, is decided from
// the device and dtype alone: a CUDA device gets LibTorch's operations without a tensor
// ever being moved there, so this runs on any machine.
#include "support/catch.h"
#include <torch/torch.h>

#include <string>

#include "nmt/base/error.h"
#include "nmt/kernels/dropout.h"
#include "nmt/kernels/kernel_choice.h"
#include "nmt/kernels/kernel_table.h"

using nmt::KernelChoice;

TEST_CASE("the CPU kernels are chosen for fp32 on the CPU only", "[kernels][device]") {
  CHECK(nmt::kernel_choice_for(c10::Device(c10::kCPU)) == KernelChoice::cpu_fp32);
  CHECK(nmt::kernel_choice_for(c10::Device(c10::kCPU), c10::ScalarType::Double) == KernelChoice::torch_ops);
  CHECK(nmt::kernel_choice_for(c10::Device(c10::kCPU), c10::ScalarType::BFloat16) == KernelChoice::torch_ops);
  CHECK(nmt::kernel_choice_for(c10::Device(c10::kCUDA)) == KernelChoice::torch_ops);
  CHECK(nmt::kernel_choice_for(c10::Device(c10::kCUDA, 1)) == KernelChoice::torch_ops);
  CHECK(nmt::describe_kernel_choice(KernelChoice::torch_ops).find("LibTorch") != std::string::npos);
}

TEST_CASE("the kernel table says that LibTorch computes every operation on CUDA", "[kernels][device]") {
  CHECK(nmt::describe_kernel_table(c10::Device(c10::kCPU)) == nmt::describe_kernel_table());
  const auto lines = nmt::describe_kernel_table(c10::Device(c10::kCUDA, 0));
  REQUIRE(lines.size() == nmt::kernel_table().size());
  for (const auto& line : lines) {
    CAPTURE(line);
    CHECK(line.find("not on cuda:0") != std::string::npos);
    CHECK(line.find("LibTorch's own operations") != std::string::npos);
  }
}

TEST_CASE("dropout runs the kernel it was given, and refuses tensors the CPU kernel cannot read",
          "[kernels][device][dropout]") {
  torch::manual_seed(3);
  const auto x = torch::ones({64, 32});
  // LibTorch's dropout, chosen for a device other than the CPU, runs on any tensor.
  const auto dropped = nmt::dropout(x, 0.5, true, KernelChoice::torch_ops);
  CHECK(dropped.eq(0).any().item<bool>());
  CHECK(dropped.eq(2).any().item<bool>());
  CHECK_THROWS_WITH(nmt::dropout(x.to(torch::kDouble), 0.5, true, KernelChoice::cpu_fp32),
                    HasSubstring("CPU kernel was chosen"));
  const auto doubles = x.to(torch::kDouble);  // not training: nothing to read, whatever the kernel
  CHECK(nmt::dropout(doubles, 0.5, false, KernelChoice::cpu_fp32).is_same(doubles));
}
