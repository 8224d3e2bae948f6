#include "nmt/serve/openmp_wait_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace nmt::serve {

void use_passive_openmp_waits(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: exec failed; serve with the default (spinning) policy rather than not at all.
}

}  // namespace nmt::serve
