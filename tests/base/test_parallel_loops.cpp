#include <ATen/Parallel.h>
#include "support/catch.h"

#include "nmt/base/parallel_loops.h"

TEST_CASE("the library's parallel loops run on every LibTorch thread", "[base][threads]") {
  const int before = at::get_num_threads();
  at::set_num_threads(2);
  CHECK(nmt::parallel_loop_threads() == 2);
  at::set_num_threads(1);
  CHECK(nmt::parallel_loop_threads() == 1);
  at::set_num_threads(before);
}
