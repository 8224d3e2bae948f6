// The process set-up the tools' mains and the tests' main call first: under NMT_CPU_ISA the
// cap reaches oneDNN (ONEDNN_MAX_CPU_ISA, read at its first dispatch) and LibTorch's own
// oneDNN paths are off (CI runs this again under NMT_CPU_ISA=avx2 and baseline).
#include "support/catch.h"

#include <ATen/Context.h>

#include <cstdlib>
#include <string>

#include "nmt/base/process_setup.h"

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

TEST_CASE("the process set-up caps oneDNN as NMT_CPU_ISA asks", "[base][isa]") {
  const auto cap = environment("NMT_CPU_ISA");
  INFO("NMT_CPU_ISA=" << cap << " ONEDNN_MAX_CPU_ISA=" << environment("ONEDNN_MAX_CPU_ISA"));
  // The tests' main has run it already; again changes nothing.
  nmt::set_up_process();
  if (cap == "avx2") CHECK(environment("ONEDNN_MAX_CPU_ISA") == "AVX2");
  if (cap == "baseline") CHECK(environment("ONEDNN_MAX_CPU_ISA") == "SSE41");
  if (cap == "avx2" || cap == "baseline") CHECK_FALSE(at::globalContext().userEnabledMkldnn());
  if ((cap.empty() || cap == "default") && environment("ONEDNN_MAX_CPU_ISA").empty())
    CHECK(at::globalContext().userEnabledMkldnn());
}
