#include "nmt/training/schedule.h"

#include <algorithm>
#include <cmath>

namespace nmt {

double LearningRateSchedule::rate(int64_t step, const PlateauState& plateau) const {
  const double peak = config_.learning_rate;
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  const double warmup = static_cast<double>(config_.warmup_steps);
  if (config_.schedule == "noam") {
    // Linear warmup to the peak, then decay with 1/sqrt(step) (Vaswani et al. 2017,
    // with the peak given directly instead of through d_model^-0.5).
    if (warmup <= 0) return peak;
    return peak * std::min(s / warmup, std::sqrt(warmup / s));
  }
  if (config_.schedule == "plateau") return std::max(peak * plateau.scale, config_.min_learning_rate);
  return peak;
}

PlateauState LearningRateSchedule::after_validation(PlateauState plateau, bool improved) const {
  if (config_.schedule != "plateau") return plateau;
  if (improved) {
    plateau.stalled_validations = 0;
    return plateau;
  }
  if (++plateau.stalled_validations >= config_.plateau_patience) {
    plateau.scale *= config_.plateau_factor;
    plateau.stalled_validations = 0;
  }
  return plateau;
}

}  // namespace nmt
