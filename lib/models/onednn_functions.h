#pragma once
// oneDNN's C functions, called directly where LibTorch's own paths are slower. They are
// taken from the libdnnl that LibTorch already loaded (in the global scope as a dependency
// of libtorch_cpu) with the types oneDNN's own header declares, and only from a library
// of the header's major version (base/library_versions.h): its C API is stable within a
// major version, and a hand-written signature could silently disagree with it.
#include <oneapi/dnnl/dnnl.h>

namespace nmt {

/// The address of oneDNN function `name`, or null when it is missing or the loaded
/// oneDNN's major version is not the header's (DNNL_VERSION_MAJOR).
void* find_onednn_function(const char* name);

}  // namespace nmt
