#include "nmt/base/cpu_features.h"

#include <ATen/Context.h>

#include <cstdlib>
#include <string>

#include "nmt/base/error.h"

namespace nmt {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool onednn_capped_below_avx512(const std::string& cap) {
  return cap == "SSE41" || cap == "AVX" || cap == "AVX2" || cap == "AVX2_VNNI";
}

// oneDNN reads ONEDNN_MAX_CPU_ISA once, at its first dispatch (after libnmt is loaded),
// so a cap set here, while the library is being loaded, reaches it. LibTorch's own
// oneDNN paths choose bfloat16 kernels by the CPU, not by the cap, and a capped oneDNN
// cannot build them ("could not create a primitive descriptor"): under a cap LibTorch
// runs without oneDNN, as it does on a CPU without AVX-512.
[[maybe_unused]] const bool onednn_cap_applied = [] {
  if (environment("NMT_CPU_ISA") == "avx2" && environment("ONEDNN_MAX_CPU_ISA").empty())
    setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
  if (onednn_capped_below_avx512(environment("ONEDNN_MAX_CPU_ISA"))) at::globalContext().setUserEnabledMkldnn(false);
  return true;
}();

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.avx512 = __builtin_cpu_supports("avx512f");
  f.avx512_vnni = __builtin_cpu_supports("avx512vnni");
  f.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
#endif
  return f;
}

// Only the AVX2 cap exists: it is the one our users' CPUs need tested.
CpuFeatures capped(CpuFeatures f) {
  const auto nmt_cap = environment("NMT_CPU_ISA");
  if (!nmt_cap.empty() && nmt_cap != "avx2" && nmt_cap != "default")
    throw Error("NMT_CPU_ISA must be avx2 or default, got \"" + nmt_cap + "\"");
  // A cap on oneDNN alone (ONEDNN_MAX_CPU_ISA=AVX2 or below) must cap our choices too:
  // the int8 weights' range depends on which kernels oneDNN runs.
  const auto onednn_cap = environment("ONEDNN_MAX_CPU_ISA");
  const bool onednn_below_avx512 = onednn_capped_below_avx512(onednn_cap);
  if (nmt_cap == "avx2") f.cap = "NMT_CPU_ISA=avx2";
  else if (onednn_below_avx512) f.cap = "ONEDNN_MAX_CPU_ISA=" + onednn_cap;
  if (!f.cap.empty()) f.avx512 = f.avx512_vnni = f.avx512_bf16 = false;
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = capped(detect());
  return features;
}

IsaLevel isa_level() {
  const auto& f = cpu_features();
  return f.avx512 ? IsaLevel::avx512 : f.avx2 ? IsaLevel::avx2 : IsaLevel::baseline;
}

std::string describe_cpu_features() {
  const auto& f = cpu_features();
  std::string line = f.avx512 ? "avx512" : f.avx2 ? "avx2" : "no avx2";
  if (f.avx512_vnni) line += " vnni";
  if (f.avx512_bf16) line += " bf16";
  if (!f.cap.empty()) line += " (capped by " + f.cap + ")";
  return line;
}

}  // namespace nmt
