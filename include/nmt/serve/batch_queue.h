#pragma once
// Batching across requests. The connection thread submits jobs (a request's lines and
// options) with a completion that the worker calls (nothing waits on a thread); ONE worker thread takes the oldest job plus every later job with the
// same options, up to max_batch_tokens, once that many tokens are waiting or the oldest
// job has waited max_wait. So all model work happens on one thread (one LibTorch pool),
// and a request's answer does not depend on what it was batched with.
// max_wait counts from the later of a job's arrival and the end of the previous batch:
// the clients just answered get that long to send again and join the next batch.
// Otherwise, under steady load, the clients split into two cohorts that alternate in
// half-size batches (each arriving while the other's batch runs).
// One job never fails another: when a batch of several jobs throws, each job is translated
// again alone, so only the job that cannot be translated gets the error.
#include <chrono>
#include <exception>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nmt/serve/request.h"
#include "nmt/serve/line_result.h"

namespace nmt::serve {

struct BatchSettings {
  int64_t max_batch_tokens = 4096;
  std::chrono::milliseconds max_wait{5};
};

/// What the worker calls; all run on the worker thread only.
struct BatchBackend {
  /// (lines, guides, options): guides holds one entry per line.
  std::function<std::vector<LineResult>(const std::vector<std::string>&, const std::vector<LineGuide>&,
                                        const JobOptions&)>
      translate;
  /// (line, guide): the tokens the line adds to a batch. Throws RequestError when the model
  /// cannot translate the line (its prefix or constraints over the model's limits): its job
  /// then fails with that status, naming the line, before it joins a batch.
  std::function<int64_t(const std::string&, const LineGuide&)> cost;
  /// Once, on the worker thread, before its first job (e.g. its LibTorch thread count,
  /// which is per thread); optional.
  std::function<void()> start_worker;
};

struct BatchStats {
  int64_t batches = 0;
  int64_t jobs = 0;
  int64_t lines = 0;
  int64_t largest_batch_jobs = 0;
};

class BatchQueue {
 public:
  BatchQueue(BatchBackend backend, BatchSettings settings);
  ~BatchQueue();  ///< stop()

  /// Called once per job, on the worker thread: the results (one per line), or the error
  /// (then `results` is empty). It must not block: it hands the answer on.
  using Completion = std::function<void(std::vector<LineResult> results, std::exception_ptr error)>;

  /// Queues a job: `guides` empty, or one per line (prefix, constraints). Throws
  /// RequestError 503 once stop() has begun (then `done` is never called).
  void submit(std::vector<std::string> lines, const JobOptions& options, std::vector<LineGuide> guides,
              Completion done);
  /// The same, for a caller that waits for the answer.
  std::future<std::vector<LineResult>> submit(std::vector<std::string> lines, const JobOptions& options,
                                              std::vector<LineGuide> guides = {});

  /// Translates everything already queued, then joins the worker. Idempotent.
  void stop();

  BatchStats stats() const;

 private:
  struct Job {
    std::vector<std::string> lines;
    std::vector<LineGuide> guides;  ///< one per line
    JobOptions options;
    std::chrono::steady_clock::time_point queued;
    Completion done;
    int64_t cost = 0;  ///< set by the worker
  };

  void work();
  /// The job's cost in tokens; throws the backend's RequestError for a line it cannot take,
  /// naming that line.
  int64_t admit(const Job& job) const;
  std::vector<Job> take_batch(bool force);
  /// When the oldest pending job is due (see the top of this file). pending_ not empty.
  std::chrono::steady_clock::time_point due_time() const;
  void run_batch(std::vector<Job>& batch);
  /// The jobs' results, one vector per job; throws what the backend throws.
  std::vector<std::vector<LineResult>> translate_together(const std::vector<Job>& batch);
  // One wait for work and the batches it makes ready; false once stopped and drained.
  bool serve_round();

  BatchBackend backend_;
  BatchSettings settings_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> incoming_;  ///< guarded by mutex_
  bool stopping_ = false;     ///< guarded by mutex_
  BatchStats stats_;          ///< guarded by mutex_
  std::deque<Job> pending_;   ///< worker thread only: costed, waiting for a batch
  std::chrono::steady_clock::time_point last_batch_end_{};  ///< worker thread only
  std::thread worker_;
};

}  // namespace nmt::serve
