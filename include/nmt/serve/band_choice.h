#pragma once
// Which lines of the batch pool the next pass translates (serve/batch_queue.h): a pure
// decision on the lines' lengths and their jobs' turn order, kept apart from the queue's
// bookkeeping so that it reads, and is tested, on its own.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nmt::serve {

struct PoolLine {
  size_t job_turn = 0;  ///< its job's place in turn order (0: the job whose turn it is)
  size_t line = 0;      ///< the line's index in its job
  int64_t tokens = 0;   ///< its length, as batching counts it
};

/// The pool's lines sorted by length, cut into bands as the translator cuts a sorted batch
/// (each at most `max_batch_tokens` padded: rows x longest); lines of one length take turns
/// between jobs (each job's first such line, then each one's second, ...), so a job that has
/// just joined shares the next band of its length instead of queueing behind an earlier
/// job's lines. The band that goes is the one whose jobs, in turn order, come first: the
/// first job that differs decides, and of two lists where one begins the other, the longer
/// goes (it advances more jobs). So the job whose turn it is always has lines in it.
/// Returns the positions in `lines` of the band's lines, shortest first; empty for none.
std::vector<size_t> choose_band(const std::vector<PoolLine>& lines, int64_t max_batch_tokens);

}  // namespace nmt::serve
