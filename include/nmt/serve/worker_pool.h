#pragma once
// A fixed set of threads running posted tasks in order of arrival. Destroying it closes it:
// the tasks already posted run, then the threads are joined.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nmt::serve {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Queues `task` (it must not throw: a task's exception would end the process).
  void post(std::function<void()> task);

 private:
  void work();
  void close_and_join();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool closed_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nmt::serve
