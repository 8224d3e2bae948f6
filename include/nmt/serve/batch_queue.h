#pragma once
// Batching across requests, shared fairly between clients. The connection thread submits
// jobs (a request's lines and options) with a completion that the worker calls (nothing
// waits on a thread); ONE worker thread takes the job whose turn it is plus later jobs with
// the same options, up to max_batch_tokens, once that many tokens are waiting or the oldest
// job has waited max_wait. So all model work happens on one thread (one LibTorch pool),
// and a request's answer does not depend on what it was batched with.
//
// Whose turn: self-clocked fair queueing (Golestani, INFOCOM 1994) over connections. A
// job's tag is when it would end in "virtual time" (the largest tag served so far): from
// when its connection's previous jobs end, or from now if they already have, plus its own
// work. So a connection that keeps the queue full gets tags further and further ahead, and
// a client that sends one line now and then gets a tag just past now: it is served within
// a batch or two however many jobs others keep queued (start tags would tie it with every
// backlogged connection's first job). A job's work is its tokens x beam, times the
// connections of its address that have jobs queued: an address gets one share however
// many connections it opens. Jobs that arrive while a batch runs are tagged when it ends,
// before the next is chosen. Jobs of callers without a connection go first, in order.
//
// max_wait counts from the later of a job's arrival and the end of the previous batch:
// the clients just answered get that long to send again and join the next batch.
// Otherwise, under steady load, the clients split into two cohorts that alternate in
// half-size batches (each arriving while the other's batch runs).
// One job never fails another: when a batch of several jobs throws, each job is translated
// again alone, so only the job that cannot be translated gets the error.
// A job whose client went away (its connection closed) is dropped, unanswered, before
// it is costed or batched.
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
#include <unordered_map>
#include <vector>

#include "nmt/serve/line_result.h"
#include "nmt/serve/request.h"
#include "nmt/serve/request_origin.h"

namespace nmt::serve {

struct BatchSettings {
  /// A request waits for the batch being translated, then for its own (~1.2 s each at beam 5
  /// on 2 cores). Smaller batches answer sooner but serve a crowd less: 2,048 tokens cost 16%
  /// of the greedy clients' lines/s, 1,024 34% (bench/RESULTS.md, "a polite client ...").
  int64_t max_batch_tokens = 4096;
  std::chrono::milliseconds max_wait{5};
  /// Lines queued (not yet answered) from one client address; a request over it gets 429.
  size_t max_client_queued_lines = 8192;
  /// How long the worker has nothing to do before BatchBackend::idle runs. Not at once: a
  /// busy server is idle for milliseconds between batches, and memory given back there is
  /// faulted in again by the next batch (64 one-line clients: 25% fewer requests/s).
  std::chrono::milliseconds idle_delay{1000};
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
  /// On the worker thread, once it has answered everything queued and nothing came for
  /// BatchSettings::idle_delay (e.g. to give freed memory back to the system); optional.
  std::function<void()> idle;
};

struct BatchStats {
  int64_t batches = 0;
  int64_t jobs = 0;
  int64_t lines = 0;
  int64_t largest_batch_jobs = 0;
  int64_t abandoned = 0;  ///< jobs dropped because their client went away
};

class BatchQueue {
 public:
  BatchQueue(BatchBackend backend, BatchSettings settings);
  ~BatchQueue();  ///< stop()

  /// Called once per job, on the worker thread: the results (one per line), or the error
  /// (then `results` is empty). It must not block: it hands the answer on.
  using Completion = std::function<void(std::vector<LineResult> results, std::exception_ptr error)>;

  /// Queues a job: `guides` empty, or one per line (prefix, constraints); `origin` says
  /// whose it is (see the top of this file). Throws RequestError 503 once stop() has begun,
  /// 429 when the client has max_client_queued_lines queued (then `done` is never called).
  /// A job dropped because its client went away gets `done` with an error nobody reads.
  void submit(std::vector<std::string> lines, const JobOptions& options, std::vector<LineGuide> guides,
              Completion done, RequestOrigin origin = {});
  /// The same, for a caller that waits for the answer.
  std::future<std::vector<LineResult>> submit(std::vector<std::string> lines, const JobOptions& options,
                                              std::vector<LineGuide> guides = {}, RequestOrigin origin = {});

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
    RequestOrigin origin;
    uint64_t sequence = 0;  ///< arrival order
    int64_t cost = 0;       ///< tokens; set by the worker
    double tag = 0;         ///< fair-queueing finish tag; set by the worker
  };

  void work();
  /// The job's cost in tokens; throws the backend's RequestError for a line it cannot take,
  /// naming that line.
  int64_t admit(const Job& job) const;
  /// Costs and tags the jobs that arrived (answering those that cannot be translated).
  void enqueue(std::deque<Job>& arrived);
  /// Answers, unread, the pending jobs whose clients went away.
  void drop_abandoned();
  std::vector<Job> take_batch(bool force);
  /// When the oldest pending job is due (see the top of this file). pending_ not empty.
  std::chrono::steady_clock::time_point due_time() const;
  void run_batch(std::vector<Job>& batch);
  /// The jobs' results, one vector per job; throws what the backend throws.
  std::vector<std::vector<LineResult>> translate_together(const std::vector<Job>& batch);
  /// Calls the job's completion, then releases what it held of its client's line budget.
  void complete(Job& job, std::vector<LineResult> results, std::exception_ptr error);
  // One wait for work and the batches it makes ready; false once stopped and drained.
  bool serve_round();

  BatchBackend backend_;
  BatchSettings settings_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> incoming_;  ///< guarded by mutex_
  bool stopping_ = false;     ///< guarded by mutex_
  BatchStats stats_;          ///< guarded by mutex_
  uint64_t arrivals_ = 0;     ///< guarded by mutex_
  std::unordered_map<std::string, size_t> queued_lines_;  ///< per client address; guarded by mutex_

  // Worker thread only.
  std::deque<Job> pending_;  ///< costed, waiting for a batch, in arrival order
  std::chrono::steady_clock::time_point last_batch_end_{};
  bool worked_since_idle_ = false;
  double virtual_time_ = 0;  ///< the largest finish tag taken into a batch so far
  std::unordered_map<uint64_t, double> connection_finish_;  ///< each connection's last finish tag
  /// Pending jobs per connection, per client address.
  std::unordered_map<std::string, std::unordered_map<uint64_t, int>> pending_connections_;

  std::thread worker_;
};

}  // namespace nmt::serve
