#include "onednn_functions.h"

#include <dlfcn.h>

#include <string>

namespace nmt {
namespace {

using VersionFunction = decltype(&dnnl_version);

struct LoadedOnednn {
  bool usable = false;
  std::string version;
};

const LoadedOnednn& loaded_onednn() {
  static const LoadedOnednn loaded = [] {
    LoadedOnednn result;
    const auto version = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "dnnl_version"));
    if (version == nullptr) {
      result.version = "no oneDNN loaded";
      return result;
    }
    const auto* v = version();
    result.version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    result.usable = v->major == DNNL_VERSION_MAJOR;
    if (!result.usable) result.version += " (not used: built against " + std::to_string(DNNL_VERSION_MAJOR) + ".x)";
    return result;
  }();
  return loaded;
}

}  // namespace

void* find_onednn_function(const char* name) {
  return loaded_onednn().usable ? dlsym(RTLD_DEFAULT, name) : nullptr;
}

const char* loaded_onednn_version() { return loaded_onednn().version.c_str(); }

}  // namespace nmt
