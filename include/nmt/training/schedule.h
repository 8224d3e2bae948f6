#pragma once
// Learning-rate schedules: constant, Noam / inverse-sqrt warmup, reduce-on-plateau.
#include <cstdint>
#include <vector>

#include "nmt/base/config.h"

namespace nmt {

class LearningRateSchedule {
 public:
  explicit LearningRateSchedule(const TrainConfig& config) : config_(config) {}
  /// Rate for update number `step` (1-based).
  double rate(int64_t step) const;
  /// Plateau: called after each validation with whether the metric improved.
  void on_validation(bool improved);

  /// The state a resumed run needs (plateau only; the others depend on the step alone), by
  /// name: `v(name, field)` for each, to write or to read (the checkpoint's progress fields).
  template <typename Visitor>
  void visit_state(Visitor&& v) {
    v("stalled_validations", stalled_validations_);
    v("plateau_scale", plateau_scale_);
  }
  /// The same state as numbers, in a fixed order (to send rank 0's to the other ranks), and
  /// back. nmt::Error on a list of another length.
  std::vector<double> state_values() const;
  void restore_state_values(const std::vector<double>& values);

 private:
  TrainConfig config_;
  double plateau_scale_ = 1.0;
  int64_t stalled_validations_ = 0;
};

}  // namespace nmt
