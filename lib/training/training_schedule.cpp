#include "nmt/training/training_schedule.h"

#include <algorithm>
#include <cmath>

#include "nmt/base/error.h"

namespace nmt {

bool TrainingSchedule::log_now(int64_t step) const { return step % config_.log_every == 0; }

bool TrainingSchedule::validate_now(int64_t step) const { return step % config_.valid_every == 0; }

bool TrainingSchedule::save_now(int64_t step) const {
  return !validate_now(step) && config_.save_every > 0 && step % config_.save_every == 0;
}

bool TrainingSchedule::patience_spent(int64_t bad_validations) const {
  return config_.patience > 0 && bad_validations >= config_.patience;
}

bool TrainingSchedule::improves(bool has_best, double best_metric, double metric) {
  return !has_best || metric > best_metric;
}

size_t TrainingSchedule::averaging_choice(const std::vector<double>& metrics) {
  if (metrics.empty()) throw Error("averaging: no checkpoint to average");
  size_t chosen = 0;
  for (size_t i = 1; i < metrics.size(); ++i)
    if (metrics[i] > metrics[chosen]) chosen = i;
  return chosen + 1;
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

int64_t TrainingSchedule::validations_left(int64_t step, int64_t last_step) const {
  if (last_step < step) return 0;
  const int64_t every = config_.valid_every;
  const int64_t at_end = last_step % every != 0 ? 1 : 0;
  // Every valid_every from this step on: a step's validation comes after its progress line.
  const int64_t periodic = last_step / every - (step - 1) / every;
  // averaged.pt: the means of the newest 2..m step checkpoints (the newest alone was
  // validated), m = average_last or the run's validations, whichever is fewer.
  const int64_t run_validations = last_step / every + at_end;
  const int64_t averages = std::max<int64_t>(0, std::min(config_.average_last, run_validations) - 1);
  return periodic + at_end + averages;
}

Eta TrainingSchedule::eta(const RunPosition& start, const RunPosition& now, const RunPace& pace) const {
  const int64_t steps_done = now.step - start.step;
  const double seconds_per_step = steps_done > 0 ? pace.training_seconds / double(steps_done) : -1;
  Eta eta;
  auto consider = [&](double training_left, int64_t validations) {
    if (training_left < 0) return;
    double left = training_left;
    bool unknown = false;
    if (validations > 0 && pace.validation_seconds >= 0) left += double(validations) * pace.validation_seconds;
    else if (validations > 0) unknown = true;
    if (eta.seconds < 0 || left < eta.seconds) eta = {left, unknown};
  };
  if (config_.max_steps > 0 && seconds_per_step >= 0)
    consider(seconds_per_step * double(config_.max_steps - now.step), validations_left(now.step, config_.max_steps));
  if (config_.max_epochs > 0 && seconds_per_step >= 0 && now.epoch > start.epoch) {
    const double steps_per_epoch = double(steps_done) / (now.epoch - start.epoch);
    const double steps_left = steps_per_epoch * (double(config_.max_epochs) - now.epoch);
    consider(seconds_per_step * steps_left, validations_left(now.step, now.step + std::llround(steps_left)));
  }
  if (config_.max_time_minutes > 0) {
    // The time limit counts the validations on the way; after it, the last one and the averages'.
    consider(std::max(0.0, config_.max_time_minutes * 60 - now.elapsed_seconds),
             1 + std::max<int64_t>(0, config_.average_last - 1));
  }
  return eta;
}

}  // namespace nmt
