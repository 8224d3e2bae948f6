#include "stop_signals.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace nmt::training_run {
namespace {

// What the handlers read: set before they are installed, or by the training thread as
// lock-free integers; the messages are written with write(2), the one way a handler may.
volatile std::sig_atomic_t stop_signal = 0;
volatile std::sig_atomic_t patience_seconds = 0;  // 0: no watchdog
char stuck_message[256];
char now_message[256];
size_t stuck_length = 0, now_length = 0;

void on_alarm(int) {
  (void)::write(STDERR_FILENO, stuck_message, stuck_length);
  ::_exit(1);
}

void on_signal(int signal) {
  if (stop_signal != 0) {
    (void)::write(STDERR_FILENO, now_message, now_length);
    ::_exit(128 + signal);
  }
  stop_signal = signal;
  if (patience_seconds > 0) ::alarm(static_cast<unsigned>(patience_seconds));
}

size_t copy_message(char* into, size_t capacity, const std::string& text) {
  const size_t length = std::min(text.size(), capacity);
  std::memcpy(into, text.data(), length);
  return length;
}

}  // namespace

StopSignals::StopSignals(int rank, int world_size) : watched_(world_size > 1) {
  const std::string who = world_size > 1 ? "nmt-train: rank " + std::to_string(rank) + ": " : "nmt-train: ";
  stuck_length = copy_message(stuck_message, sizeof stuck_message,
                              who + "no step ended within the watchdog's patience after the stop signal (a collective "
                                    "waits for a rank that went away): exiting without a final save; last.pt holds "
                                    "the last one\n");
  now_length = copy_message(now_message, sizeof now_message,
                            who + "second signal: exiting now, without a final save; last.pt holds the last one\n");
  stop_signal = 0;
  patience_seconds = watched_ ? 10 : 0;
  previous_alarm_ = std::signal(SIGALRM, on_alarm);
  previous_int_ = std::signal(SIGINT, on_signal);
  previous_term_ = std::signal(SIGTERM, on_signal);
}

StopSignals::~StopSignals() {
  ::alarm(0);
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
  std::signal(SIGALRM, previous_alarm_);
  patience_seconds = 0;
}

int StopSignals::requested() const { return stop_signal; }

void StopSignals::step_took(double seconds) {
  if (!watched_ || patience_seconds == 0) return;
  slowest_step_ = std::max(slowest_step_, seconds);
  patience_seconds = static_cast<std::sig_atomic_t>(10 + std::ceil(3 * slowest_step_));
}

void StopSignals::disarm_watchdog() {
  patience_seconds = 0;
  ::alarm(0);
}

}  // namespace nmt::training_run
