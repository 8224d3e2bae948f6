#pragma once
// Learning-rate schedules: constant, Noam / inverse-sqrt warmup, reduce-on-plateau.
#include <cstdint>

#include "nmt/base/config.h"

namespace nmt {

/// The plateau schedule's state (the other schedules depend on the step alone). A value in
/// the run's TrainingState, so it is saved, resumed and shared between ranks with the rest.
struct PlateauState {
  double scale = 1.0;               ///< the peak rate's factor so far
  int64_t stalled_validations = 0;  ///< validations without improvement since the last decay
  bool operator==(const PlateauState& other) const {
    return scale == other.scale && stalled_validations == other.stalled_validations;
  }
};

/// A pure policy: the rate of a step and the plateau's reaction to a validation, from the
/// config and the state it is given.
class LearningRateSchedule {
 public:
  explicit LearningRateSchedule(const TrainConfig& config) : config_(config) {}
  /// Rate for update number `step` (1-based).
  double rate(int64_t step, const PlateauState& plateau) const;
  /// The plateau state after a validation that did or did not improve the metric.
  PlateauState after_validation(PlateauState plateau, bool improved) const;

 private:
  TrainConfig config_;
};

}  // namespace nmt
