#pragma once
// When a training run logs, validates, saves and stops. The answers depend on the train
// section and the run's position alone (no clock, no files), so the policy is tested on its
// own (tests/training/test_training_schedule.cpp) and the loop only asks.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/base/config.h"

namespace nmt {

/// Where a run stands after an update (or before its first one).
struct RunPosition {
  int64_t step = 0;            ///< updates done
  double epoch = 0;            ///< epochs done, fractional (2.5: halfway through the third)
  double elapsed_seconds = 0;  ///< over every start of the run
};

/// How this start of the run has spent its time so far.
struct RunPace {
  double training_seconds = 0;     ///< since this start, validations excluded
  double validation_seconds = -1;  ///< what the last validation took (with its saves); negative: none yet
};

/// Time left until the run ends, validations included.
struct Eta {
  double seconds = -1;               ///< negative: unknown (no limit, or no pace yet)
  bool validations_unknown = false;  ///< validations are to come but none has been timed yet: not counted
};

class TrainingSchedule {
 public:
  explicit TrainingSchedule(const TrainConfig& config) : config_(config) {}

  /// A progress line after update `step`.
  bool log_now(int64_t step) const;
  /// Validate (then write last.pt, best.pt when it improved, step-N.pt) after update `step`.
  bool validate_now(int64_t step) const;
  /// Write last.pt between validations, so a crash loses at most train.save_every steps.
  bool save_now(int64_t step) const;
  /// Early stopping: the validations without improvement have used up train.patience.
  bool patience_spent(int64_t bad_validations) const;
  /// Whether a validation's `metric` (higher is better: the loss enters negated) is the run's
  /// new best: the first one is; after it only a strictly higher one (a tie keeps the
  /// earlier best.pt and counts against patience).
  static bool improves(bool has_best, double best_metric, double metric);
  /// train.average_last: which mean becomes averaged.pt, from the validation metric of the
  /// mean of the newest m step checkpoints at metrics[m - 1]: the highest, and of equal ones
  /// the fewest checkpoints (the newest weights count most). Returns m; nmt::Error for none.
  static size_t averaging_choice(const std::vector<double>& metrics);

  /// Why the run stops after this update ("" to go on), in order of precedence: a signal,
  /// early stopping (only at a validation: `patience_spent` of it), max_steps, max_time_minutes.
  /// max_epochs is answered at the end of an epoch (`stop_at_epoch_end`).
  std::string stop_reason(const RunPosition& now, bool patience_spent_now, int signal) const;
  /// Why the run stops once `epochs_done` epochs are complete ("" to go on).
  std::string stop_at_epoch_end(int64_t epochs_done) const;
  /// Why a run takes no step at all: its limits were reached before this start ("" to train).
  std::string reached_before_start(int64_t step, int64_t epoch, double elapsed_seconds) const;

  /// At the end: validate once more when the last update was not validated; a run stopped
  /// by a signal skips it (and the averaging) to exit quickly, saving last.pt only.
  bool validate_at_end(int64_t step, int signal) const;
  bool average_at_end(int signal) const;

  /// Validations still to come after update `step` when the run ends after update
  /// `last_step`: every train.valid_every, the one at the end, and the averages'.
  int64_t validations_left(int64_t step, int64_t last_step) const;
  /// Time left by the closest limit (steps, epochs, time): the updates left at the pace of
  /// this start (which began at `start`), plus the validations left at the last one's time.
  Eta eta(const RunPosition& start, const RunPosition& now, const RunPace& pace) const;

 private:
  TrainConfig config_;
};

}  // namespace nmt
