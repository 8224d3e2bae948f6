#include "nmt/training/schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "nmt/base/error.h"

namespace nmt {

double LearningRateSchedule::rate(int64_t step) const {
  const double peak = config_.learning_rate;
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  const double warmup = static_cast<double>(config_.warmup_steps);
  if (config_.schedule == "noam") {
    // Linear warmup to the peak, then decay with 1/sqrt(step) (Vaswani et al. 2017,
    // with the peak given directly instead of through d_model^-0.5).
    if (warmup <= 0) return peak;
    return peak * std::min(s / warmup, std::sqrt(warmup / s));
  }
  if (config_.schedule == "plateau") return std::max(peak * plateau_scale_, config_.min_learning_rate);
  return peak;
}

void LearningRateSchedule::on_validation(bool improved) {
  if (config_.schedule != "plateau") return;
  if (improved) {
    stalled_validations_ = 0;
    return;
  }
  if (++stalled_validations_ >= config_.plateau_patience) {
    plateau_scale_ *= config_.plateau_factor;
    stalled_validations_ = 0;
  }
}

std::vector<double> LearningRateSchedule::state_values() const {
  return {plateau_scale_, static_cast<double>(stalled_validations_)};
}

void LearningRateSchedule::restore_state_values(const std::vector<double>& values) {
  if (values.size() != 2)
    throw Error("learning-rate schedule: " + std::to_string(values.size()) + " state values, expected 2");
  plateau_scale_ = values[0];
  stalled_validations_ = static_cast<int64_t>(values[1]);
}

}  // namespace nmt
