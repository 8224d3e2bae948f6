#include "nmt/serve/batch_queue.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "nmt/serve/band_choice.h"

namespace nmt::serve {

BatchQueue::BatchQueue(BatchBackend backend, BatchSettings settings)
    : backend_(std::move(backend)), settings_(settings), worker_([this] { work(); }) {}

BatchQueue::~BatchQueue() { stop(); }

void BatchQueue::submit(std::vector<std::string> lines, const JobOptions& options, std::vector<LineGuide> guides,
                        Completion done, RequestOrigin origin) {
  if (guides.empty()) guides.resize(lines.size());
  if (guides.size() != lines.size())
    throw Error(std::to_string(guides.size()) + " line guides for " + std::to_string(lines.size()) + " lines");
  const size_t line_count = lines.size();
  Job job{std::move(lines), std::move(guides), options, std::chrono::steady_clock::now(), std::move(done),
          std::move(origin)};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw RequestError(503, "the server is shutting down");
    if (!job.origin.client.empty()) {
      auto& queued = queued_lines_[job.origin.client];
      if (queued + line_count > settings_.max_client_queued_lines) {
        if (queued == 0) queued_lines_.erase(job.origin.client);
        throw RequestError(429, std::to_string(queued) + " lines from " + job.origin.client +
                                    " are waiting to be translated; at most " +
                                    std::to_string(settings_.max_client_queued_lines) +
                                    " per client address (--max-client-queued-lines): retry once they are answered");
      }
      queued += line_count;
    }
    job.sequence = arrivals_++;
    incoming_.push_back(std::move(job));
  }
  wake_.notify_one();
}

std::future<std::vector<LineResult>> BatchQueue::submit(std::vector<std::string> lines, const JobOptions& options,
                                                        std::vector<LineGuide> guides, RequestOrigin origin) {
  auto promise = std::make_shared<std::promise<std::vector<LineResult>>>();
  auto future = promise->get_future();
  submit(
      std::move(lines), options, std::move(guides),
      [promise](std::vector<LineResult> results, std::exception_ptr error) {
        if (error) promise->set_exception(error);
        else promise->set_value(std::move(results));
      },
      std::move(origin));
  return future;
}

void BatchQueue::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (worker_.joinable()) worker_.join();
}

BatchStats BatchQueue::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void BatchQueue::work() {
  if (backend_.start_worker) backend_.start_worker();
  for (;;) {
    try {
      if (!serve_round()) return;
    } catch (...) {
      // Nothing may end the worker while requests wait on it: what was pending fails (500).
      const auto failure = std::current_exception();
      std::list<Job> failed;
      failed.swap(pending_);
      pending_connections_.clear();
      for (auto& job : failed)
        if (!job.answered) complete(job, {}, failure);
    }
  }
}

std::vector<AdmittedLine> BatchQueue::admit(const Job& job) const {
  std::vector<AdmittedLine> admitted;
  admitted.reserve(job.lines.size());
  for (size_t i = 0; i < job.lines.size(); ++i) {
    try {
      admitted.push_back(backend_.admit(job.lines[i], job.guides[i]));
    } catch (const RequestError& e) {
      throw RequestError(e.status(), "line " + std::to_string(i + 1) + " of the request: " + e.what());
    }
  }
  return admitted;
}

// The budget first: a client that has its answer may send again at once.
void BatchQueue::complete(Job& job, std::vector<LineResult> results, std::exception_ptr error) {
  job.answered = true;
  if (!job.origin.client.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto queued = queued_lines_.find(job.origin.client);
    if (queued != queued_lines_.end()) {
      queued->second -= std::min(queued->second, job.lines.size());
      if (queued->second == 0) queued_lines_.erase(queued);
    }
  }
  job.done(std::move(results), error);
}

// Admitting encodes, so it happens here on the worker, outside the lock; a job the model
// cannot take is answered here and never joins the pool.
void BatchQueue::enqueue(std::deque<Job>& arrived) {
  for (auto& job : arrived) {
    if (job.origin.abandoned()) {
      complete(job, {}, std::make_exception_ptr(RequestError(499, "the client went away")));
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.abandoned += 1;
      continue;
    }
    if (job.lines.empty()) {  // nothing to translate: it would never be done in a pool
      complete(job, {}, nullptr);
      continue;
    }
    try {
      job.admitted = admit(job);
    } catch (...) {
      complete(job, {}, std::current_exception());
      continue;
    }
    for (const auto& line : job.admitted) job.cost += line.tokens;
    if (job.origin.connection == 0) {
      job.tag = virtual_time_;  // no connection to be fair to: in order of arrival, before the others
    } else {
      auto& connections = pending_connections_[job.origin.client];
      connections[job.origin.connection] += 1;
      auto& finish = connection_finish_[job.origin.connection];
      const double work = static_cast<double>(std::max<int64_t>(job.cost, 1)) * job.options.search.beam;
      finish = std::max(virtual_time_, finish) + work * static_cast<double>(connections.size());
      job.tag = finish;
    }
    pending_.push_back(std::move(job));
  }
}

void BatchQueue::drop_abandoned() {
  int64_t dropped = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!it->origin.abandoned()) {
      ++it;
      continue;
    }
    Job job = std::move(*it);
    it = pending_.erase(it);
    if (job.origin.connection != 0 && !job.in_pool) {
      auto& connections = pending_connections_[job.origin.client];
      if (--connections[job.origin.connection] <= 0) connections.erase(job.origin.connection);
      if (connections.empty()) pending_connections_.erase(job.origin.client);
    }
    complete(job, {}, std::make_exception_ptr(RequestError(499, "the client went away")));
    ++dropped;
  }
  if (dropped == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.abandoned += dropped;
}

bool BatchQueue::serve_round() {
  std::deque<Job> arrived;
  bool stopping = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto news = [this] { return !incoming_.empty() || stopping_; };
    if (pending_.empty()) {
      if (worked_since_idle_ && backend_.idle && !wake_.wait_for(lock, settings_.idle_delay, news)) {
        worked_since_idle_ = false;
        lock.unlock();  // submit() goes on meanwhile
        backend_.idle();
        lock.lock();
      }
      wake_.wait(lock, news);
    } else {
      wake_.wait_until(lock, due_time(), news);
    }
    arrived.swap(incoming_);
    stopping = stopping_;
  }
  enqueue(arrived);
  while (fill_pool(stopping)) {
    const auto band = next_band();
    if (band.empty()) break;
    run_band(band);
    worked_since_idle_ = true;
    // The jobs that came while the band ran take their turn against those still waiting:
    // admitted only once the queue ran dry, they would wait behind all of it.
    arrived.clear();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      arrived.swap(incoming_);
    }
    enqueue(arrived);
  }
  if (stopping && pending_.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (incoming_.empty()) return false;  // submit() refuses new jobs once stopping_ is set
  }
  return true;
}

bool BatchQueue::pool_open() const {
  return std::any_of(pending_.begin(), pending_.end(), [](const Job& job) { return job.in_pool; });
}

// A fresh pool takes the job with the smallest finish tag (the earliest arrival among equal
// tags) and the later ones with its options, while they fit (the first always goes, even
// alone over the limit). An open pool takes, in tag order, the jobs that fit, and stops
// at the first whose options differ: that job's turn has come, and it waits for the pool
// to drain rather than be passed over.
bool BatchQueue::fill_pool(bool force) {
  drop_abandoned();
  if (pending_.empty()) return false;
  std::vector<Job*> turn;
  int64_t tokens = 0;
  const Job* member = nullptr;
  for (auto& job : pending_) {
    if (!job.in_pool) turn.push_back(&job);
    else tokens += job.tokens_left, member = &job;
  }
  std::stable_sort(turn.begin(), turn.end(), [](const Job* a, const Job* b) { return a->tag < b->tag; });
  const bool open = member != nullptr;
  const int64_t limit = settings_.max_batch_tokens * settings_.maxi_batch;
  const JobOptions options = open ? member->options : turn.front()->options;
  std::vector<Job*> joining;
  bool full = false;
  for (Job* job : turn) {
    if (job->options != options) {
      if (open) break;
      continue;
    }
    if ((open || !joining.empty()) && tokens + job->cost > limit) {
      full = true;
      break;
    }
    joining.push_back(job);
    tokens += job->cost;
  }
  full = full || tokens >= limit;
  if (!open && !full && !force && std::chrono::steady_clock::now() < due_time()) return false;
  for (Job* job : joining) join_pool(*job);
  // Virtual time is the tag of the job in service: the pool's first in turn order (not
  // its last: the pool's later jobs still wait for their lines, and a client that comes
  // now is due before them).
  const Job* head = nullptr;
  for (const auto& job : pending_)
    if (job.in_pool && (!head || earlier(&job, head))) head = &job;
  virtual_time_ = std::max(virtual_time_, head->tag);
  // A connection whose work ends before now in virtual time starts from "now" anyway.
  for (auto it = connection_finish_.begin(); it != connection_finish_.end();)
    it = it->second <= virtual_time_ ? connection_finish_.erase(it) : std::next(it);
  return true;
}

void BatchQueue::join_pool(Job& job) {
  job.in_pool = true;
  job.results.resize(job.lines.size());
  job.line_done.assign(job.lines.size(), false);
  job.lines_left = job.lines.size();
  job.tokens_left = job.cost;
  if (job.origin.connection == 0) return;
  auto& connections = pending_connections_[job.origin.client];
  if (--connections[job.origin.connection] <= 0) connections.erase(job.origin.connection);
  if (connections.empty()) pending_connections_.erase(job.origin.client);
}

// Two jobs in turn order: the smaller tag, then the earlier arrival.
bool BatchQueue::earlier(const Job* a, const Job* b) { return a->tag != b->tag ? a->tag < b->tag : a->sequence < b->sequence; }

std::vector<BatchQueue::LineRef> BatchQueue::next_band() {
  std::vector<Job*> jobs;
  for (auto& job : pending_)
    if (job.in_pool && !job.answered) jobs.push_back(&job);
  std::sort(jobs.begin(), jobs.end(), earlier);
  std::vector<PoolLine> lines;
  std::vector<LineRef> refs;
  for (size_t turn = 0; turn < jobs.size(); ++turn) {
    Job* job = jobs[turn];
    for (size_t i = 0; i < job->lines.size(); ++i) {
      if (job->line_done[i]) continue;
      lines.push_back({turn, i, job->admitted[i].tokens});
      refs.push_back({job, i});
    }
  }
  std::vector<LineRef> band;
  for (const size_t i : choose_band(lines, settings_.max_batch_tokens)) band.push_back(refs[i]);
  return band;
}

std::chrono::steady_clock::time_point BatchQueue::due_time() const {
  return std::max(pending_.front().queued, last_batch_end_) + settings_.max_wait;
}

std::vector<LineResult> BatchQueue::translate_lines(const std::vector<LineRef>& band) {
  std::vector<std::string> lines;
  std::vector<LineGuide> guides;
  std::vector<const AdmittedLine*> admitted;
  for (const auto& ref : band) {
    lines.push_back(ref.job->lines[ref.line]);
    guides.push_back(ref.job->guides[ref.line]);
    admitted.push_back(&ref.job->admitted[ref.line]);
  }
  auto results = backend_.translate(lines, guides, admitted, band.front().job->options);
  if (results.size() != lines.size()) throw Error("the translator returned a wrong number of results");
  return results;
}

void BatchQueue::deliver(const std::vector<LineRef>& band, std::vector<LineResult>& results) {
  for (size_t i = 0; i < band.size(); ++i) {
    Job& job = *band[i].job;
    if (job.answered) continue;
    job.results[band[i].line] = std::move(results[i]);
    job.line_done[band[i].line] = true;
    job.tokens_left -= job.admitted[band[i].line].tokens;
    if (--job.lines_left == 0) complete(job, std::move(job.results), nullptr);
  }
}

void BatchQueue::run_band(const std::vector<LineRef>& band) {
  // Everything that can throw happens before a job's completion, so a job is answered
  // exactly once. A band that fails is split by job: each job's lines in it alone, so that
  // the one that cannot be translated gets its error and the others their translations.
  std::vector<const Job*> jobs;
  for (const auto& ref : band)
    if (std::find(jobs.begin(), jobs.end(), ref.job) == jobs.end()) jobs.push_back(ref.job);
  try {
    auto results = translate_lines(band);
    deliver(band, results);
  } catch (...) {
    const auto failure = std::current_exception();
    for (const Job* job : jobs) {
      std::vector<LineRef> alone;
      for (const auto& ref : band)
        if (ref.job == job) alone.push_back(ref);
      std::vector<LineResult> results;
      std::exception_ptr error = jobs.size() == 1 ? failure : nullptr;
      if (!error) {
        try {
          results = translate_lines(alone);
        } catch (...) {
          error = std::current_exception();
        }
      }
      if (error) complete(*alone.front().job, {}, error);
      else deliver(alone, results);
    }
  }
  int64_t answered = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!it->answered) {
      ++it;
      continue;
    }
    ++answered;
    it = pending_.erase(it);
  }
  last_batch_end_ = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.batches += 1;
  stats_.jobs += answered;
  stats_.lines += static_cast<int64_t>(band.size());
  stats_.largest_batch_jobs = std::max(stats_.largest_batch_jobs, static_cast<int64_t>(jobs.size()));
}

}  // namespace nmt::serve
