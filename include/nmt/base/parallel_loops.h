#pragma once
// The library's own parallel loops (single-query attention, int8 dequantisation, dropout
// masks, the loss) use LibTorch's at::parallel_for, an inline template of its headers: it
// spreads a loop over LibTorch's OpenMP threads only where the code calling it is compiled
// with OpenMP, and silently runs it on one thread otherwise. parallel_loops.cpp refuses to
// compile without OpenMP; this says what a loop actually gets.

#include <cstdint>

namespace nmt {

/// How many distinct threads one at::parallel_for in the library runs a loop of
/// at::get_num_threads() items on (grain 1): that thread count where the pool works.
int parallel_loop_threads();

/// The grain of an at::parallel_for over items of `item_elements` elements each: about
/// 16k elements per task, so that small calls stay on one thread and large ones spread
/// over all of them.
int64_t items_per_task(int64_t item_elements);

}  // namespace nmt
