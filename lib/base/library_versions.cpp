#include "nmt/base/library_versions.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <torch/version.h>

#include "nmt_torch_build.h"
#include "nmt_version.h"

namespace nmt {
namespace {

using VersionFunction = decltype(&dnnl_version);

// Looked up, not linked: the oneDNN is the one LibTorch loaded (a dependency of
// libtorch_cpu, in the global scope), or none when this LibTorch was built without it.
const dnnl_version_t* loaded_version() {
  static const dnnl_version_t* version = [] {
    const auto function = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "dnnl_version"));
    return function != nullptr ? function() : nullptr;
  }();
  return version;
}

std::string dotted(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// _GLIBCXX_USE_CXX11_ABI comes from LibTorch's CMake package (TORCH_CXX_FLAGS): every
// target that links it is compiled with the ABI that LibTorch was built with.
const char* cxx_abi() {
#if defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI == 0
  return "pre-cxx11";
#else
  return "cxx11";
#endif
}

}  // namespace

bool onednn_usable() { return loaded_version() != nullptr && loaded_version()->major == DNNL_VERSION_MAJOR; }

std::string loaded_onednn_version() {
  const auto* v = loaded_version();
  if (v == nullptr) return "none loaded";
  auto text = dotted(v->major, v->minor, v->patch);
  if (!onednn_usable()) text += " (not used: built against " + std::to_string(DNNL_VERSION_MAJOR) + ".x)";
  return text;
}

std::string library_versions() {
  const std::string package = NMT_TORCH_PACKAGE;
  return std::string("LibTorch ") + TORCH_VERSION + " (C++ ABI " + cxx_abi() +
         (package.empty() ? "" : "; headers of " + package) + "), oneDNN " +
         loaded_onednn_version() + " (headers " +
         dotted(DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR, DNNL_VERSION_PATCH) + "), SentencePiece " +
         NMT_SENTENCEPIECE_VERSION;
}

}  // namespace nmt
