#include "onednn_functions.h"

#include <dlfcn.h>

namespace nmt {
namespace {

using VersionFunction = decltype(&dnnl_version);

const dnnl_version_t* loaded_version() {
  static const dnnl_version_t* version = [] {
    const auto function = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "dnnl_version"));
    return function != nullptr ? function() : nullptr;
  }();
  return version;
}

// Whether the loaded oneDNN has the header's major version.
bool onednn_usable() { return loaded_version() != nullptr && loaded_version()->major == DNNL_VERSION_MAJOR; }

}  // namespace

void* find_onednn_function(const char* name) { return onednn_usable() ? dlsym(RTLD_DEFAULT, name) : nullptr; }

std::string loaded_onednn_version() {
  const auto* v = loaded_version();
  if (v == nullptr) return "none loaded";
  auto text = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  if (!onednn_usable()) text += " (not used: built against " + std::to_string(DNNL_VERSION_MAJOR) + ".x)";
  return text;
}

}  // namespace nmt
