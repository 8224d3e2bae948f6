#pragma once
// Batching across requests, shared fairly between clients. The connection thread submits
// jobs (a request's lines and options) with a completion that the worker calls (nothing
// waits on a thread); ONE worker thread does all model work (one LibTorch pool), so a
// request's answer does not depend on what it was batched with.
//
// Continuous batching, Marian's mini- and maxi-batches: the worker keeps a pool of jobs of
// equal options, up to maxi_batch x max_batch_tokens source tokens, sorts their lines
// still to translate by length, cuts them into bands of at most max_batch_tokens padded
// tokens (one forward pass each), and translates one band at a time. A job is answered as
// soon as its last line is done, and after each band the pool takes in the jobs whose turn
// has come. So a request waits for one band in flight, not for a whole batch before its
// own, while the model still sees length-sorted batches.
//
// Whose turn: self-clocked fair queueing (Golestani, INFOCOM 1994) over connections. A
// job's tag is when it would end in "virtual time" (the tag of the job in service: the
// pool's first in turn order): from when its connection's previous jobs end, or from now if
// they already have, plus its own work. So a connection that keeps the queue full gets tags
// further and further ahead, and a client that sends one line now and then gets a tag just
// past now: it joins the pool at the next band, right after the job in service. A job's
// work is its tokens x beam, times the connections of its address that have jobs queued:
// an address gets one share however many connections it opens. Jobs that arrive while a
// band runs are tagged when it ends. Jobs of callers without a connection go first, in
// order. The pool takes jobs in tag order and stops at one with other options (it waits
// for the pool to drain; a fresh pool takes that job's options). Which band next: the one
// whose jobs, in turn order, come first (the first job that differs decides; of two lists
// where one begins the other, the longer): it always holds a line of the pool's first job,
// so no job in the pool waits for ever. Lines of equal length take turns between jobs, so
// a job that has just joined shares the next band of its length.
//
// A fresh pool waits until it is full or the oldest job has waited max_wait, counted from
// the later of the job's arrival and the end of the previous band: the clients just
// answered get that long to send again and join. A pool with lines left never waits.
// One job never fails another: when a band of several jobs throws, each job's lines in it
// are translated again alone, so only the job that cannot be translated gets the error.
// A job whose client went away (its connection closed) is dropped, unanswered, before its
// next band.
#include <any>
#include <chrono>
#include <exception>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <list>
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
  /// Padded source tokens translated in one pass (a band). A request waits for the band in
  /// flight, then for its own (~0.5 s each at beam 5 on 2 cores): smaller answers sooner,
  /// larger uses the cores better (bench/RESULTS.md, "a polite client ...").
  int64_t max_batch_tokens = 1536;
  std::chrono::milliseconds max_wait{5};
  /// Lines queued (not yet answered) from one client address; a request over it gets 429.
  size_t max_client_queued_lines = 8192;
  /// How long the worker has nothing to do before BatchBackend::idle runs. Not at once: a
  /// busy server is idle for milliseconds between batches, and memory given back there is
  /// faulted in again by the next batch (64 one-line clients: 25% fewer requests/s).
  std::chrono::milliseconds idle_delay{1000};
  /// The pool sorted by length is this many bands' worth of source tokens: more, less
  /// padding in each band; fewer, a job's lines spread over fewer bands.
  int64_t maxi_batch = 3;
};

/// A line as the backend admitted it: the tokens it adds to a batch, and the backend's own
/// form of it (nmt-serve: the line checked and encoded), which BatchBackend::translate gets
/// back, so that a line is encoded once. The queue never looks inside `prepared`.
struct AdmittedLine {
  int64_t tokens = 0;
  std::any prepared;
};

/// What the worker calls; all run on the worker thread only.
struct BatchBackend {
  /// (lines, guides, admitted, options): one entry per line in each; `admitted` holds what
  /// `admit` returned for the line (a line may be translated again, alone, after its band failed).
  std::function<std::vector<LineResult>(const std::vector<std::string>&, const std::vector<LineGuide>&,
                                        const std::vector<const AdmittedLine*>&, const JobOptions&)>
      translate;
  /// (line, guide): the line admitted. Throws RequestError when the model cannot translate
  /// the line (its prefix or constraints over the model's limits): its job then fails with
  /// that status, naming the line, before it joins a batch.
  std::function<AdmittedLine(const std::string&, const LineGuide&)> admit;
  /// Once, on the worker thread, before its first job (e.g. its LibTorch thread count,
  /// which is per thread); optional.
  std::function<void()> start_worker;
  /// On the worker thread, once it has answered everything queued and nothing came for
  /// BatchSettings::idle_delay (e.g. to give freed memory back to the system); optional.
  std::function<void()> idle;
};

struct BatchStats {
  int64_t batches = 0;  ///< bands translated
  int64_t jobs = 0;     ///< jobs answered with their translations
  int64_t lines = 0;
  int64_t largest_batch_jobs = 0;  ///< most jobs with lines in one band
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
    // Set by the worker.
    std::vector<AdmittedLine> admitted{};  ///< per line: its cost, its prepared form
    int64_t cost = 0;                  ///< tokens, all lines
    double tag = 0;                    ///< fair-queueing finish tag
    bool in_pool = false;
    bool answered = false;             ///< its completion was called; leaves pending_ next
    std::vector<LineResult> results{};  ///< one per line, filled band by band
    std::vector<bool> line_done{};
    size_t lines_left = 0;
    int64_t tokens_left = 0;
  };
  /// One line of a pooled job.
  struct LineRef {
    Job* job;
    size_t line;
  };

  void work();
  /// Each line as the backend admits it; throws the backend's RequestError for a line it
  /// cannot take, naming that line.
  std::vector<AdmittedLine> admit(const Job& job) const;
  /// Costs and tags the jobs that arrived (answering those that cannot be translated).
  void enqueue(std::deque<Job>& arrived);
  /// Answers, unread, the pending jobs whose clients went away.
  void drop_abandoned();
  /// Takes the jobs whose turn has come into the pool; false when a fresh pool should wait
  /// for more (not full, the oldest job not yet due, not stopping).
  bool fill_pool(bool force);
  void join_pool(Job& job);
  static bool earlier(const Job* a, const Job* b);
  /// The band to translate next (see the top of this file); empty when the pool is.
  std::vector<LineRef> next_band();
  void run_band(const std::vector<LineRef>& band);
  /// The band's lines translated together, in band order; throws what the backend throws.
  std::vector<LineResult> translate_lines(const std::vector<LineRef>& band);
  /// Files a band's results in their jobs and answers the jobs that are complete.
  void deliver(const std::vector<LineRef>& band, std::vector<LineResult>& results);
  /// Calls the job's completion, then releases what it held of its client's line budget.
  void complete(Job& job, std::vector<LineResult> results, std::exception_ptr error);
  /// When the oldest pending job is due (see the top of this file). pending_ not empty.
  std::chrono::steady_clock::time_point due_time() const;
  bool pool_open() const;
  // One wait for work and the bands it makes ready; false once stopped and drained.
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
  std::list<Job> pending_;  ///< costed, not yet answered (pooled or waiting), in arrival order
  std::chrono::steady_clock::time_point last_batch_end_{};
  bool worked_since_idle_ = false;
  double virtual_time_ = 0;  ///< the largest finish tag taken into a batch so far
  std::unordered_map<uint64_t, double> connection_finish_;  ///< each connection's last finish tag
  /// Pending jobs per connection, per client address.
  std::unordered_map<std::string, std::unordered_map<uint64_t, int>> pending_connections_;

  std::thread worker_;
};

}  // namespace nmt::serve
