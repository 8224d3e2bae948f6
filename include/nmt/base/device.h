#pragma once
// The --device flag shared by the tools.
#include <c10/core/Device.h>

#include <string>

namespace nmt {

/// "cpu", "cuda" (the current GPU) or "cuda:N" (GPU N). Throws nmt::Error when CUDA is
/// asked for but this LibTorch has no CUDA support or sees no GPU, for an index past the
/// GPUs it sees, and for any other name.
c10::Device parse_device(const std::string& name);

/// Whether `device` is a CUDA GPU that multiplies bfloat16 natively (compute capability 8.0
/// or later: Ampere, Hopper). False for any other device, and where this build cannot ask:
/// compiled against a LibTorch without CUDA's headers, which cannot run on a GPU anyway.
bool cuda_supports_bf16(const c10::Device& device);

/// "cuda:0 (compute capability 9.0)" for a CUDA device this build can ask about, else the
/// device's name.
std::string describe_device(const c10::Device& device);

}  // namespace nmt
