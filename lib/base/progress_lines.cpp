#include "nmt/base/progress_lines.h"

#include <cstdio>

#include "nmt/base/cli.h"

namespace nmt {

ProgressLines::ProgressLines(std::string tool, Clock::duration every)
    : tool_(std::move(tool)), every_(every), start_(Clock::now()), last_(start_) {}

void ProgressLines::say(const std::string& text) {
  last_ = Clock::now();
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, " (%.0f s)", elapsed_seconds());
  cli::print_line(tool_ + ": " + text + elapsed);
}

double ProgressLines::elapsed_seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

ProgressHeartbeat::ProgressHeartbeat(std::string tool, std::string text, ProgressLines::Clock::duration every)
    : lines_(std::move(tool), every), text_(std::move(text)) {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_.wait_for(lock, lines_.every(), [this] { return stopping_; })) lines_.say(text_);
  });
}

ProgressHeartbeat::~ProgressHeartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_one();
  thread_.join();
}

}  // namespace nmt
