#pragma once
// Private to lib/training: how a training run stops on SIGINT and SIGTERM.
//  - The first signal asks the run to stop after the step in progress: every rank agrees
//    on it at the end of the step, rank 0 saves, all exit 0.
//  - In a distributed run a rank may be stuck in a collective that waits for a rank that
//    went away (until --dist-timeout, 600 s by default): a watchdog then ends the process
//    once no step has finished within its patience after the signal (10 s plus 3x the
//    slowest step so far, validations included), exit 1, without a final save: last.pt
//    holds the last one (checkpoints are written whole or not at all).
//  - A second signal ends the process at once, the same way.
// The handlers found are put back however the run ends (a throw included).
#include <csignal>
#include <string>

namespace nmt::training_run {

class StopSignals {
 public:
  /// `rank` and `world_size` word the messages; the watchdog exists when world_size > 1.
  StopSignals(int rank, int world_size);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// The signal that asked the run to stop, or 0.
  int requested() const;
  /// After each step (its update, and its validation or the wait for it): the watchdog's
  /// patience follows the slowest.
  void step_took(double seconds);
  /// The ranks agreed to stop, or training ended: nothing waits for another rank's step
  /// any more, and the final save must not be cut short by the watchdog.
  void disarm_watchdog();

 private:
  using Handler = void (*)(int);
  Handler previous_int_, previous_term_, previous_alarm_;
  bool watched_;
  double slowest_step_ = 0;
};

}  // namespace nmt::training_run
