#pragma once
// oneDNN's C functions, called directly where LibTorch's own paths are slower. They are
// taken from the libdnnl that LibTorch already loaded (in the global scope as a dependency
// of libtorch_cpu) with the types oneDNN's own header declares, and only from a library
// of the header's major version: its C API is stable within a major version, and a
// hand-written signature could silently disagree with it.
#include <oneapi/dnnl/dnnl.h>

#include <string>

namespace nmt {

/// The address of oneDNN function `name`, or null when it is missing or the loaded
/// oneDNN's major version is not the header's (DNNL_VERSION_MAJOR).
void* find_onednn_function(const char* name);

/// The loaded oneDNN's version ("3.1.1"), saying when it is not used (another major
/// version) or none is loaded; for --verbose.
std::string loaded_onednn_version();

}  // namespace nmt
