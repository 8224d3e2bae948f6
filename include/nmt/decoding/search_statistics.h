#pragma once
// What the searches count about their own work, for tests of how it grows.
#include <cstdint>

namespace nmt::search_detail {

/// Elements the searches have written into attention histories in this process so far
/// (each step's rows, a history's growth, the rows gathered for a hypothesis): for tests
/// of how that work grows with the output length.
int64_t attention_history_elements_copied();

}  // namespace nmt::search_detail
