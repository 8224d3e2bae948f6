#pragma once
// Progress of long work on stderr: a plain line at most every `every` (10 s by default),
// "<tool>: <what is done> (<elapsed>)". Plain lines rather than a bar: they read the same on
// a terminal and in a log file, and each is one write (cli::print_line), so a script
// following the log never sees half of one. Work that ends sooner says nothing.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace nmt {

class ProgressLines {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ProgressLines(std::string tool, Clock::duration every = std::chrono::seconds(10));

  /// Says "<tool>: <text> (<elapsed> s)" if `every` has passed since the start or since the
  /// last line; `text` is built only then.
  template <typename MakeText>
  void maybe_say(MakeText&& make_text) {
    if (Clock::now() - last_ < every_) return;
    say(make_text());
  }
  /// Says it now, whatever the time.
  void say(const std::string& text);
  double elapsed_seconds() const;
  Clock::duration every() const { return every_; }

 private:
  std::string tool_;
  Clock::duration every_;
  Clock::time_point start_, last_;
};

/// A tool's --progress-every SECONDS as an interval.
inline ProgressLines::Clock::duration progress_interval(double seconds) {
  return std::chrono::duration_cast<ProgressLines::Clock::duration>(std::chrono::duration<double>(seconds));
}

/// For work that cannot report how far it is (a library call that returns only when done):
/// from construction to destruction, "<tool>: <text> (<elapsed> s)" every `every`, from a
/// thread of its own.
class ProgressHeartbeat {
 public:
  ProgressHeartbeat(std::string tool, std::string text, ProgressLines::Clock::duration every = std::chrono::seconds(10));
  ~ProgressHeartbeat();
  ProgressHeartbeat(const ProgressHeartbeat&) = delete;
  ProgressHeartbeat& operator=(const ProgressHeartbeat&) = delete;

 private:
  ProgressLines lines_;
  std::string text_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace nmt
