#pragma once
// Whether this CPU and LibTorch run a precision. Where they do not, the test checks that
// asking for it is refused with the reason (what a user gets) and says it checked no more.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/models/precision.h"

namespace nmt::test {

inline bool runs_here(Precision precision) {
  if (precision_supported(precision, torch::kCPU)) return true;
  CHECK_THROWS_WITH(require_precision_support(precision, torch::kCPU),
                    HasSubstring(precision_name(precision) + " needs"));
  WARN(precision_name(precision) << " not checked further: this CPU or LibTorch cannot run it");
  return false;
}

}  // namespace nmt::test
