#pragma once
// The --device flag shared by the tools.
#include <c10/core/Device.h>

#include <string>

namespace nmt {

/// "cpu" or "cuda". Throws nmt::Error when CUDA is asked for but this LibTorch has
/// no CUDA support or sees no GPU, and for any other name.
c10::Device parse_device(const std::string& name);

}  // namespace nmt
