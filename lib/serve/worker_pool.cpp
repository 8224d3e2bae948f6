#include "nmt/serve/worker_pool.h"

namespace nmt::serve {

WorkerPool::WorkerPool(int threads) {
  threads_.reserve(static_cast<size_t>(threads));
  try {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  } catch (...) {
    close_and_join();  // the threads that did start
    throw;
  }
}

WorkerPool::~WorkerPool() { close_and_join(); }

void WorkerPool::close_and_join() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
  for (auto& thread : threads_)
    if (thread.joinable()) thread.join();
  threads_.clear();
}

void WorkerPool::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
}

void WorkerPool::work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return closed_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // closed and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace nmt::serve
