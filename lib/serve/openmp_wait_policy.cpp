#include "nmt/serve/openmp_wait_policy.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace nmt::serve {

void use_passive_openmp_waits(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  // The program's file by its own name: executing /proc/self/exe would name the process
  // "exe" (ps, top, pkill nmt-serve would not find it).
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
  execv(self.c_str(), argv);
  // Still here: exec failed (e.g. the file was replaced); serve with the default policy.
}

}  // namespace nmt::serve
