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
  const std::string cuda = "cuda", indexed = "cuda:";
  if (name != cuda && name.compare(0, indexed.size(), indexed) != 0)
    throw Error("unknown device \"" + name + "\" (expected cpu, cuda or cuda:N)");
  if (name == cuda) {
    if (!torch::cuda::is_available())
      throw Error("--device cuda: this LibTorch has no CUDA support or no GPU is visible");
    return c10::Device(c10::kCUDA);
  }
  // The index is checked before CUDA is asked, so that a typo is named as one on any machine.
  const std::string digits = name.substr(indexed.size());
  if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos)
    throw Error("--device " + name + ": expected cuda:N with N a GPU's index (0, 1, ...)");
  const int index = std::stoi(digits);
  if (!torch::cuda::is_available())
    throw Error("--device " + name + ": this LibTorch has no CUDA support or no GPU is visible");
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (index >= count)
    throw Error("--device " + name + ": there is no GPU " + digits + " (" + std::to_string(count) + " visible)");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

bool cuda_supports_bf16(const c10::Device& device) { return compute_capability(device).first >= 8; }

std::string describe_device(const c10::Device& device) {
  const auto [major, minor] = compute_capability(device);
  if (major == 0) return device.str();
  return device.str() + " (compute capability " + std::to_string(major) + "." + std::to_string(minor) + ")";
}

}  // namespace nmt
