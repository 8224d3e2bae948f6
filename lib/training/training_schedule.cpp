#include "nmt/training/training_schedule.h"

namespace nmt {

bool TrainingSchedule::log_now(int64_t step) const { return step % config_.log_every == 0; }

bool TrainingSchedule::validate_now(int64_t step) const { return step % config_.valid_every == 0; }

bool TrainingSchedule::save_now(int64_t step) const {
  return !validate_now(step) && config_.save_every > 0 && step % config_.save_every == 0;
}

bool TrainingSchedule::patience_spent(int64_t bad_validations) const {
  return config_.patience > 0 && bad_validations >= config_.patience;
}

std::string TrainingSchedule::stop_reason(const RunPosition& now, bool patience_spent_now, int signal) const {
  if (signal != 0) return "interrupted by signal " + std::to_string(signal);
  if (patience_spent_now) return "early stopping (patience " + std::to_string(config_.patience) + ")";
  if (config_.max_steps > 0 && now.step >= config_.max_steps) return "reached max_steps";
  if (config_.max_time_minutes > 0 && now.elapsed_seconds >= config_.max_time_minutes * 60)
    return "reached max_time_minutes";
  return {};
}

std::string TrainingSchedule::stop_at_epoch_end(int64_t epochs_done) const {
  if (config_.max_epochs > 0 && epochs_done >= config_.max_epochs) return "reached max_epochs";
  return {};
}

std::string TrainingSchedule::reached_before_start(int64_t step, int64_t epoch, double elapsed_seconds) const {
  if (config_.max_steps > 0 && step >= config_.max_steps) return "already at max_steps " + std::to_string(config_.max_steps);
  if (config_.max_epochs > 0 && epoch >= config_.max_epochs)
    return "already at max_epochs " + std::to_string(config_.max_epochs);
  if (config_.max_time_minutes > 0 && elapsed_seconds >= config_.max_time_minutes * 60)
    return "already at max_time_minutes";
  return {};
}

bool TrainingSchedule::validate_at_end(int64_t step, int signal) const { return signal == 0 && !validate_now(step); }

bool TrainingSchedule::average_at_end(int signal) const { return signal == 0 && config_.average_last > 0; }

double TrainingSchedule::eta_seconds(const RunPosition& start, const RunPosition& now,
                                     double seconds_since_start) const {
  double eta = -1;
  auto consider = [&](double left) {
    if (left >= 0 && (eta < 0 || left < eta)) eta = left;
  };
  if (config_.max_steps > 0 && now.step > start.step)
    consider(seconds_since_start / double(now.step - start.step) * double(config_.max_steps - now.step));
  if (config_.max_epochs > 0 && now.epoch > start.epoch)
    consider(seconds_since_start / (now.epoch - start.epoch) * (double(config_.max_epochs) - now.epoch));
  if (config_.max_time_minutes > 0) consider(config_.max_time_minutes * 60 - now.elapsed_seconds);
  return eta;
}

}  // namespace nmt
