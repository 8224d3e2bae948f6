#include "nmt/serve/batch_queue.h"

#include <algorithm>
#include <exception>
#include <utility>

namespace nmt::serve {

BatchQueue::BatchQueue(BatchBackend backend, BatchSettings settings)
    : backend_(std::move(backend)), settings_(settings), worker_([this] { work(); }) {}

BatchQueue::~BatchQueue() { stop(); }

void BatchQueue::submit(std::vector<std::string> lines, const JobOptions& options, std::vector<LineGuide> guides,
                        Completion done) {
  if (guides.empty()) guides.resize(lines.size());
  if (guides.size() != lines.size())
    throw Error(std::to_string(guides.size()) + " line guides for " + std::to_string(lines.size()) + " lines");
  Job job{std::move(lines), std::move(guides), options, std::chrono::steady_clock::now(), std::move(done), 0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw RequestError(503, "the server is shutting down");
    incoming_.push_back(std::move(job));
  }
  wake_.notify_one();
}

std::future<std::vector<LineResult>> BatchQueue::submit(std::vector<std::string> lines, const JobOptions& options,
                                                        std::vector<LineGuide> guides) {
  auto promise = std::make_shared<std::promise<std::vector<LineResult>>>();
  auto future = promise->get_future();
  submit(std::move(lines), options, std::move(guides), [promise](std::vector<LineResult> results, std::exception_ptr error) {
    if (error) promise->set_exception(error);
    else promise->set_value(std::move(results));
  });
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
      for (auto& job : pending_) job.done({}, failure);
      pending_.clear();
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

bool BatchQueue::serve_round() {
  std::deque<Job> arrived;
  bool stopping = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto news = [this] { return !incoming_.empty() || stopping_; };
    if (pending_.empty()) wake_.wait(lock, news);
    else wake_.wait_until(lock, due_time(), news);
    arrived.swap(incoming_);
    stopping = stopping_;
  }
  // Costing tokenizes, so it happens here on the worker, outside the lock; a job the model
  // cannot take is answered here and never joins a batch.
  for (auto& job : arrived) {
    try {
      job.cost = admit(job);
      pending_.push_back(std::move(job));
    } catch (...) {
      job.done({}, std::current_exception());
    }
  }
  for (auto batch = take_batch(stopping); !batch.empty(); batch = take_batch(stopping)) run_batch(batch);
  if (stopping && pending_.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (incoming_.empty()) return false;  // submit() refuses new jobs once stopping_ is set
  }
  return true;
}

// The oldest job and the later ones with its options, in queue order, while they fit
// in max_batch_tokens (the oldest always goes, even alone over the limit). Empty when
// the batch should wait for more: not full, the oldest not yet due, not stopping.
std::vector<BatchQueue::Job> BatchQueue::take_batch(bool force) {
  if (pending_.empty()) return {};
  const JobOptions options = pending_.front().options;
  std::vector<size_t> chosen;
  int64_t tokens = 0;
  bool full = false;
  for (size_t i = 0; i < pending_.size(); ++i) {
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
  for (size_t i : chosen) batch.push_back(std::move(pending_[i]));
  for (auto it = chosen.rbegin(); it != chosen.rend(); ++it) pending_.erase(pending_.begin() + static_cast<long>(*it));
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
    for (size_t j = 0; j < batch.size(); ++j) batch[j].done(std::move(answers[j]), nullptr);
  } else if (batch.size() == 1) {
    batch.front().done({}, failure);
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
      alone.front().done(std::move(answer), error);
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
