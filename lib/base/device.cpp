#include "nmt/base/device.h"

#include <torch/cuda.h>

// CUDA's device properties come from LibTorch's CUDA headers, which need the CUDA toolkit's
// own (Debian's LibTorch ships the former without CUDA): only where both are present.
#if __has_include(<ATen/cuda/CUDAContext.h>) && __has_include(<cuda_runtime_api.h>)
#include <ATen/cuda/CUDAContext.h>
#define NMT_HAVE_CUDA_PROPERTIES 1
#endif

#include <utility>

#include "nmt/base/error.h"

namespace nmt {
namespace {

// {major, minor} compute capability of a CUDA device; {0, 0} where it cannot be asked.
std::pair<int, int> compute_capability(const c10::Device& device) {
#ifdef NMT_HAVE_CUDA_PROPERTIES
  if (device.is_cuda() && torch::cuda::is_available()) {
    const auto index = device.has_index() ? device.index() : at::cuda::current_device();
    const auto* properties = at::cuda::getDeviceProperties(index);
    return {properties->major, properties->minor};
  }
#else
  (void)device;
#endif
  return {0, 0};
}

}  // namespace

c10::Device parse_device(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name == "cuda") {
    if (!torch::cuda::is_available())
      throw Error("--device cuda: this LibTorch has no CUDA support or no GPU is visible");
    return c10::Device(c10::kCUDA);
  }
  throw Error("unknown device \"" + name + "\" (expected cpu or cuda)");
}

bool cuda_supports_bf16(const c10::Device& device) { return compute_capability(device).first >= 8; }

std::string describe_device(const c10::Device& device) {
  const auto [major, minor] = compute_capability(device);
  if (major == 0) return device.str();
  return device.str() + " (compute capability " + std::to_string(major) + "." + std::to_string(minor) + ")";
}

}  // namespace nmt
