#pragma once
// Learning-rate schedules: constant, Noam / inverse-sqrt warmup, reduce-on-plateau.
#include <cstdint>

#include "nmt/base/config.h"

namespace nmt {

class LearningRateSchedule {
 public:
  explicit LearningRateSchedule(const TrainConfig& config) : config_(config) {}
  /// Rate for update number `step` (1-based).
  double rate(int64_t step) const;
  /// Plateau: called after each validation with whether the metric improved.
  void on_validation(bool improved);

  // Resumable state (plateau only; the others depend on the step alone).
  double plateau_scale = 1.0;
  int64_t stalled_validations = 0;

 private:
  TrainConfig config_;
};

}  // namespace nmt
