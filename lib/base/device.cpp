#include "nmt/base/device.h"

#include <torch/cuda.h>

#include "nmt/base/error.h"

namespace nmt {

c10::Device parse_device(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name == "cuda") {
    if (!torch::cuda::is_available())
      throw Error("--device cuda: this LibTorch has no CUDA support or no GPU is visible");
    return c10::Device(c10::kCUDA);
  }
  throw Error("unknown device \"" + name + "\" (expected cpu or cuda)");
}

}  // namespace nmt
