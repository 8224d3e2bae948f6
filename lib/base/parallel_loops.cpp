#include "nmt/base/parallel_loops.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

// Every file of the library is compiled with the same flags, so this one check holds for all.
#ifndef _OPENMP
#error "libnmt must be compiled with OpenMP (CMake: OpenMP::OpenMP_CXX): at::parallel_for would run on one thread"
#endif

namespace nmt {

int parallel_loop_threads() {
  const int64_t threads = at::get_num_threads();
  std::vector<int> ran(static_cast<size_t>(threads), 0);
  at::parallel_for(0, threads, 1, [&](int64_t begin, int64_t end) {
    if (begin < end) ran[static_cast<size_t>(at::get_thread_num())] = 1;
  });
  return std::accumulate(ran.begin(), ran.end(), 0);
}

int64_t items_per_task(int64_t item_elements) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, item_elements));
}

}  // namespace nmt
