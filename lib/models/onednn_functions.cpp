#include "onednn_functions.h"

#include <dlfcn.h>

namespace nmt {
namespace {

using VersionFunction = decltype(&dnnl_version);

// Whether the loaded oneDNN has the header's major version.
bool onednn_usable() {
  static const bool usable = [] {
    const auto version = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "dnnl_version"));
    return version != nullptr && version()->major == DNNL_VERSION_MAJOR;
  }();
  return usable;
}

}  // namespace

void* find_onednn_function(const char* name) { return onednn_usable() ? dlsym(RTLD_DEFAULT, name) : nullptr; }

}  // namespace nmt
