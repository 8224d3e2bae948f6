// The kernel table names every operation of lib/kernels/ and says which version runs: the
// one the CPU and NMT_CPU_ISA allow (CI runs this again under NMT_CPU_ISA=avx2 and
// NMT_CPU_ISA=baseline).
#include "support/catch.h"

#include <cstdlib>
#include <set>
#include <string>

#include "nmt/base/cpu_features.h"
#include "nmt/kernels/kernel_table.h"

TEST_CASE("the kernel table names every operation once, with a fallback", "[kernels][isa]") {
  const std::set<std::string> expected{"vector max and sum",      "vector exp sum",         "int8 input quantization",
                                       "int8 dequantization",     "dropout mask",           "attention products",
                                       "single-query attention",  "best tokens",            "smoothed cross-entropy",
                                       "Adam elements"};
  std::set<std::string> named;
  for (const auto& entry : nmt::kernel_table()) {
    CHECK(named.insert(entry.operation).second);
    CHECK_FALSE(entry.fallback.empty());
  }
  CHECK(named == expected);
  CHECK(nmt::describe_kernel_table().size() == expected.size());
}

TEST_CASE("the kernel table reports the version NMT_CPU_ISA allows", "[kernels][isa]") {
  INFO("CPU: " << nmt::describe_cpu_features());
  const char* cap = std::getenv("NMT_CPU_ISA");
  const std::string capped = cap != nullptr ? cap : "";
  for (const auto& entry : nmt::kernel_table()) {
    CAPTURE(entry.operation);
    CHECK(entry.runs <= entry.widest);
    CHECK(entry.runs <= nmt::isa_level());
#if defined(__x86_64__) && defined(__GNUC__)
    if (capped == "avx2" && nmt::cpu_features().avx2) CHECK(nmt::isa_level_name(entry.runs) == "avx2");
    if (capped == "baseline") CHECK(nmt::isa_level_name(entry.runs) == "baseline");
    if (capped.empty() && nmt::cpu_features().avx512 && entry.operation != "single-query attention")
      CHECK(nmt::isa_level_name(entry.runs) == "avx512");
#endif
  }
}
