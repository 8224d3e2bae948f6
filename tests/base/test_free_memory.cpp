// FreeMemoryReleaser: after a peak is freed, the memory the allocator kept goes back to
// the system (the process's resident set falls), and a small amount stays.
#include "support/catch.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "nmt/base/free_memory.h"

namespace {

size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t total = 0, resident = 0;
  statm >> total >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST_CASE("freed memory held by the allocator goes back to the system", "[base]") {
  constexpr size_t kMiB = 1u << 20;
  const nmt::FreeMemoryReleaser releaser(16 * kMiB);
  INFO("allocator: " << releaser.allocator());
  releaser.release_if_over();  // from a clean start
  const size_t before = resident_bytes();
  {
    // A request's peak: many blocks of the sizes a batch's tensors have, all touched.
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 300; ++i) {
      blocks.emplace_back(new char[kMiB + 4096 * static_cast<size_t>(i % 7)]);
      std::memset(blocks.back().get(), 1, kMiB);
    }
    CHECK(resident_bytes() > before + 250 * kMiB);
  }
  releaser.release_if_over();
  CHECK(resident_bytes() < before + 50 * kMiB);
  if (releaser.allocator() == "tcmalloc") {  // (glibc counts trimmed chunks as free still)
    CHECK(releaser.held_free_bytes() <= 16 * kMiB);
    CHECK(releaser.release_if_over() == 0);  // under the threshold: nothing to do
  }
}
