#include "nmt/serve/batch_queue.h"

#include <algorithm>
#include <exception>
#include <utility>

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
      std::deque<Job> failed;
      failed.swap(pending_);
      pending_connections_.clear();
      for (auto& job : failed) complete(job, {}, failure);
    }
  }
}

int64_t BatchQueue::admit(const Job& job) const {
  int64_t cost = 0;
  for (size_t i = 0; i < job.lines.size(); ++i) {
    try {
      cost += backend_.cost(job.lines[i], job.guides[i]);
    } catch (const RequestError& e) {
      throw RequestError(e.status(), "line " + std::to_string(i + 1) + " of the request: " + e.what());
    }
  }
  return cost;
}

// The budget first: a client that has its answer may send again at once.
void BatchQueue::complete(Job& job, std::vector<LineResult> results, std::exception_ptr error) {
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

// Costing tokenizes, so it happens here on the worker, outside the lock; a job the model
// cannot take is answered here and never joins a batch.
void BatchQueue::enqueue(std::deque<Job>& arrived) {
  for (auto& job : arrived) {
    if (job.origin.abandoned()) {
      complete(job, {}, std::make_exception_ptr(RequestError(499, "the client went away")));
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.abandoned += 1;
      continue;
    }
    try {
      job.cost = admit(job);
    } catch (...) {
      complete(job, {}, std::current_exception());
      continue;
    }
    if (job.origin.connection == 0) {
      job.tag = virtual_time_;  // no connection to be fair to: in order of arrival, before the others
    } else {
      auto& connections = pending_connections_[job.origin.client];
      connections[job.origin.connection] += 1;
      auto& finish = connection_finish_[job.origin.connection];
      const double work = static_cast<double>(std::max<int64_t>(job.cost, 1)) * job.options.beam;
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
    if (job.origin.connection != 0) {
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
  for (auto batch = take_batch(stopping); !batch.empty(); batch = take_batch(stopping)) {
    run_batch(batch);
    worked_since_idle_ = true;
    // The jobs that came while the batch ran take their turn against those still waiting:
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

// The job with the smallest finish tag (the earliest arrival among equal tags) and the others
// with its options, in the same order, while they fit in max_batch_tokens (the first
// always goes, even alone over the limit). Empty when the batch should wait for more: not
// full, the oldest job not yet due, not stopping.
std::vector<BatchQueue::Job> BatchQueue::take_batch(bool force) {
  drop_abandoned();
  if (pending_.empty()) return {};
  std::vector<size_t> turn(pending_.size());
  for (size_t i = 0; i < turn.size(); ++i) turn[i] = i;
  std::stable_sort(turn.begin(), turn.end(), [this](size_t a, size_t b) { return pending_[a].tag < pending_[b].tag; });
  const JobOptions options = pending_[turn.front()].options;
  std::vector<size_t> chosen;
  int64_t tokens = 0;
  bool full = false;
  for (size_t i : turn) {
    if (pending_[i].options != options) continue;
    if (!chosen.empty() && tokens + pending_[i].cost > settings_.max_batch_tokens) {
      full = true;
      break;
    }
    chosen.push_back(i);
    tokens += pending_[i].cost;
  }
  full = full || tokens >= settings_.max_batch_tokens;
  const bool due = std::chrono::steady_clock::now() >= due_time();
  if (!full && !due && !force) return {};
  std::vector<Job> batch;
  for (size_t i : chosen) {
    virtual_time_ = std::max(virtual_time_, pending_[i].tag);
    batch.push_back(std::move(pending_[i]));
  }
  std::sort(chosen.begin(), chosen.end());
  for (auto it = chosen.rbegin(); it != chosen.rend(); ++it) pending_.erase(pending_.begin() + static_cast<long>(*it));
  for (const auto& job : batch) {
    if (job.origin.connection == 0) continue;
    auto& connections = pending_connections_[job.origin.client];
    if (--connections[job.origin.connection] <= 0) connections.erase(job.origin.connection);
    if (connections.empty()) pending_connections_.erase(job.origin.client);
  }
  // A connection whose work ends before now in virtual time starts from "now" anyway.
  for (auto it = connection_finish_.begin(); it != connection_finish_.end();)
    it = it->second <= virtual_time_ ? connection_finish_.erase(it) : std::next(it);
  return batch;
}

std::chrono::steady_clock::time_point BatchQueue::due_time() const {
  return std::max(pending_.front().queued, last_batch_end_) + settings_.max_wait;
}

std::vector<std::vector<LineResult>> BatchQueue::translate_together(const std::vector<Job>& batch) {
  std::vector<std::string> lines;
  std::vector<LineGuide> guides;
  for (const auto& job : batch) {
    lines.insert(lines.end(), job.lines.begin(), job.lines.end());
    guides.insert(guides.end(), job.guides.begin(), job.guides.end());
  }
  auto results = backend_.translate(lines, guides, batch.front().options);
  if (results.size() != lines.size()) throw Error("the translator returned a wrong number of results");
  std::vector<std::vector<LineResult>> answers;
  size_t next = 0;
  for (const auto& job : batch) {
    answers.emplace_back(std::make_move_iterator(results.begin() + static_cast<long>(next)),
                         std::make_move_iterator(results.begin() + static_cast<long>(next + job.lines.size())));
    next += job.lines.size();
  }
  return answers;
}

void BatchQueue::run_batch(std::vector<Job>& batch) {
  // Everything that can throw happens before the first completion, so a job is answered
  // exactly once. A batch that fails is split: each job alone, so that the one that cannot
  // be translated gets its error and the others their translations.
  size_t lines = 0;
  for (const auto& job : batch) lines += job.lines.size();
  std::vector<std::vector<LineResult>> answers;
  std::exception_ptr failure;
  try {
    answers = translate_together(batch);
  } catch (...) {
    failure = std::current_exception();
  }
  if (!failure) {
    for (size_t j = 0; j < batch.size(); ++j) complete(batch[j], std::move(answers[j]), nullptr);
  } else if (batch.size() == 1) {
    complete(batch.front(), {}, failure);
  } else {
    for (auto& job : batch) {
      std::vector<Job> alone;
      alone.push_back(std::move(job));
      std::vector<LineResult> answer;
      std::exception_ptr error;
      try {
        answer = std::move(translate_together(alone).front());
      } catch (...) {
        error = std::current_exception();
      }
      complete(alone.front(), std::move(answer), error);
    }
  }
  last_batch_end_ = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.batches += 1;
  stats_.jobs += static_cast<int64_t>(batch.size());
  stats_.lines += static_cast<int64_t>(lines);
  stats_.largest_batch_jobs = std::max(stats_.largest_batch_jobs, static_cast<int64_t>(batch.size()));
}

}  // namespace nmt::serve
