#include "nmt/base/cpu_features.h"

#include <algorithm>

#include <ATen/Context.h>

#include <cstdlib>
#include <string>

#include "nmt/base/error.h"
#include "nmt/base/process_setup.h"

namespace nmt {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The caps NMT_CPU_ISA offers: each makes the project choose as on a CPU that has no more
// than `level`, and caps oneDNN to the matching ONEDNN_MAX_CPU_ISA. avx2 is what most of
// our users' CPUs have; baseline (x86-64 without AVX2, oneDNN on SSE4.1) is the only way to
// run the baseline versions of our loops on a development machine.
struct IsaCap {
  const char* name;
  const char* onednn_max_cpu_isa;
  IsaLevel level;
};
constexpr IsaCap isa_caps[] = {{"avx2", "AVX2", IsaLevel::avx2}, {"baseline", "SSE41", IsaLevel::baseline}};

const IsaCap* find_cap(const std::string& name) {
  for (const auto& cap : isa_caps)
    if (name == cap.name) return &cap;
  return nullptr;
}

// The level a ONEDNN_MAX_CPU_ISA value allows ("" or an AVX-512 one: no cap from it).
IsaLevel onednn_cap_level(const std::string& cap) {
  if (cap == "SSE41" || cap == "AVX") return IsaLevel::baseline;
  if (cap == "AVX2" || cap == "AVX2_VNNI") return IsaLevel::avx2;
  return IsaLevel::avx512;
}

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

CpuFeatures capped(CpuFeatures f) {
  const auto nmt_cap = environment("NMT_CPU_ISA");
  const IsaCap* cap = find_cap(nmt_cap);
  if (!nmt_cap.empty() && nmt_cap != "default" && cap == nullptr)
    throw Error("NMT_CPU_ISA must be avx2, baseline or default, got \"" + nmt_cap + "\"");
  // A cap on oneDNN alone (ONEDNN_MAX_CPU_ISA=AVX2 or below) must cap our choices too:
  // the int8 weights' range depends on which kernels oneDNN runs.
  const auto onednn_cap = environment("ONEDNN_MAX_CPU_ISA");
  IsaLevel level = onednn_cap_level(onednn_cap);
  if (cap != nullptr) {
    f.cap = "NMT_CPU_ISA=" + nmt_cap;
    level = cap->level;
  } else if (level != IsaLevel::avx512) {
    f.cap = "ONEDNN_MAX_CPU_ISA=" + onednn_cap;
  }
  if (level != IsaLevel::avx512) f.avx512 = f.avx512_vnni = f.avx512_bf16 = false;
  if (level == IsaLevel::baseline) f.avx2 = false;
  return f;
}

}  // namespace

void set_up_process() {
  const IsaCap* cap = find_cap(environment("NMT_CPU_ISA"));
  if (cap != nullptr && environment("ONEDNN_MAX_CPU_ISA").empty())
    setenv("ONEDNN_MAX_CPU_ISA", cap->onednn_max_cpu_isa, 1);
  if (onednn_cap_level(environment("ONEDNN_MAX_CPU_ISA")) != IsaLevel::avx512)
    at::globalContext().setUserEnabledMkldnn(false);
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = capped(detect());
  return features;
}

IsaLevel isa_level() {
  const auto& f = cpu_features();
  return f.avx512 ? IsaLevel::avx512 : f.avx2 ? IsaLevel::avx2 : IsaLevel::baseline;
}

IsaLevel dispatch_level(IsaLevel widest) { return std::min(widest, isa_level()); }

std::string describe_cpu_features() {
  const auto& f = cpu_features();
  std::string line = f.avx512 ? "avx512" : f.avx2 ? "avx2" : "no avx2";
  if (f.avx512_vnni) line += " vnni";
  if (f.avx512_bf16) line += " bf16";
  if (!f.cap.empty()) line += " (capped by " + f.cap + ")";
  return line;
}

}  // namespace nmt
