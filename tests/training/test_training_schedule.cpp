// The training schedule's answers, without a model or a clock.
#include "support/catch.h"

#include "nmt/training/training_schedule.h"

using namespace nmt;

namespace {

TrainConfig every(int64_t log, int64_t valid, int64_t save) {
  TrainConfig config;
  config.log_every = log;
  config.valid_every = valid;
  config.save_every = save;
  return config;
}

}  // namespace

TEST_CASE("the schedule logs, validates and saves at their intervals, a validation step saving anyway",
          "[training_schedule]") {
  const TrainingSchedule schedule(every(10, 100, 30));
  CHECK(schedule.log_now(10));
  CHECK_FALSE(schedule.log_now(15));
  CHECK(schedule.validate_now(200));
  CHECK_FALSE(schedule.validate_now(250));
  CHECK(schedule.save_now(30));
  CHECK_FALSE(schedule.save_now(31));
  CHECK_FALSE(schedule.save_now(300));  // validated: last.pt is written by the validation
  CHECK_FALSE(TrainingSchedule(every(10, 100, 0)).save_now(30));
}

TEST_CASE("the stop reasons come in order: signal, patience, steps, time, then epochs at an epoch's end",
          "[training_schedule]") {
  TrainConfig config;
  config.max_steps = 100;
  config.max_time_minutes = 1;
  config.max_epochs = 3;
  config.patience = 2;
  const TrainingSchedule schedule(config);
  CHECK(schedule.stop_reason({50, 1.5, 10}, false, 0).empty());
  CHECK(schedule.stop_reason({100, 1.5, 10}, false, 0) == "reached max_steps");
  CHECK(schedule.stop_reason({50, 1.5, 60}, false, 0) == "reached max_time_minutes");
  CHECK(schedule.stop_reason({100, 1.5, 60}, true, 0) == "early stopping (patience 2)");
  CHECK(schedule.stop_reason({100, 1.5, 60}, true, 15) == "interrupted by signal 15");
  CHECK(schedule.stop_reason({50, 3.0, 10}, false, 0).empty());  // epochs are counted at the end
  CHECK(schedule.stop_at_epoch_end(2).empty());
  CHECK(schedule.stop_at_epoch_end(3) == "reached max_epochs");
  CHECK_FALSE(schedule.patience_spent(1));
  CHECK(schedule.patience_spent(2));
  CHECK_FALSE(TrainingSchedule(TrainConfig{}).patience_spent(1000));  // patience 0: never
}

TEST_CASE("a run already at a limit takes no step, one without limits never stops by itself",
          "[training_schedule]") {
  TrainConfig config;
  config.max_steps = 100;
  config.max_epochs = 2;
  config.max_time_minutes = 1;
  const TrainingSchedule schedule(config);
  CHECK(schedule.reached_before_start(99, 1, 59).empty());
  CHECK(schedule.reached_before_start(100, 0, 0) == "already at max_steps 100");
  CHECK(schedule.reached_before_start(0, 2, 0) == "already at max_epochs 2");
  CHECK(schedule.reached_before_start(0, 0, 60) == "already at max_time_minutes");
  TrainConfig unlimited;
  unlimited.max_steps = unlimited.max_epochs = 0;
  unlimited.max_time_minutes = 0;
  const TrainingSchedule endless(unlimited);
  CHECK(endless.reached_before_start(1000000, 1000, 1e9).empty());
  CHECK(endless.stop_reason({1000000, 1000, 1e9}, false, 0).empty());
  CHECK(endless.stop_at_epoch_end(1000).empty());
}

TEST_CASE("the end of a run validates only an unvalidated last step, and not after a signal",
          "[training_schedule]") {
  TrainConfig config = every(10, 100, 0);
  config.average_last = 3;
  const TrainingSchedule schedule(config);
  CHECK(schedule.validate_at_end(150, 0));
  CHECK_FALSE(schedule.validate_at_end(200, 0));
  CHECK_FALSE(schedule.validate_at_end(150, 2));
  CHECK(schedule.average_at_end(0));
  CHECK_FALSE(schedule.average_at_end(15));
  config.average_last = 0;
  CHECK_FALSE(TrainingSchedule(config).average_at_end(0));
}

TEST_CASE("the ETA is the closest limit at the pace of this start", "[training_schedule]") {
  TrainConfig config;
  config.max_steps = 1000;
  config.max_epochs = 0;
  config.max_time_minutes = 0;
  config.valid_every = 100000;  // no validation before the end but the final one
  const RunPace timed{50, 10};  // 50 s of training in this start, the last validation 10 s
  // Resumed at step 200 (100 s into the run); 100 steps in 50 s: 700 steps left, 350 s, then
  // the final validation.
  CHECK(TrainingSchedule(config).eta({200, 1, 100}, {300, 1.5, 150}, timed).seconds == Approx(360));
  config.max_time_minutes = 3;  // 30 s of the 180 left, then the final validation: closer than the steps
  CHECK(TrainingSchedule(config).eta({200, 1, 100}, {300, 1.5, 150}, timed).seconds == Approx(40));
  config.max_steps = 0, config.max_time_minutes = 0, config.max_epochs = 2;
  // Half an epoch in 50 s, half an epoch left.
  CHECK(TrainingSchedule(config).eta({200, 1, 100}, {300, 1.5, 150}, timed).seconds == Approx(60));
  config.max_epochs = 0;
  CHECK(TrainingSchedule(config).eta({200, 1, 100}, {300, 1.5, 150}, timed).seconds < 0);  // no limit: unknown
}

TEST_CASE("the ETA counts the validations left at the last one's time", "[training_schedule]") {
  TrainConfig config;
  config.max_steps = 1000;
  config.max_epochs = 0;
  config.max_time_minutes = 0;
  config.valid_every = 250;
  config.average_last = 0;
  const TrainingSchedule schedule(config);
  // After step 300: 500, 750 and 1000 (the last one is the end's).
  CHECK(schedule.validations_left(300, 1000) == 3);
  CHECK(schedule.validations_left(1000, 1000) == 1);  // logged before its validation
  CHECK(schedule.validations_left(1001, 1000) == 0);
  CHECK(schedule.validations_left(300, 900) == 3);  // 500, 750, and one at the end (900)
  // 700 steps at 0.5 s, 3 validations of 20 s.
  const auto eta = schedule.eta({200, 1, 100}, {300, 1.5, 150}, RunPace{50, 20});
  CHECK(eta.seconds == Approx(350 + 60));
  CHECK_FALSE(eta.validations_unknown);
  // Averaging the newest 3 step checkpoints validates the means of 2 and 3 (the newest alone was).
  config.average_last = 3;
  CHECK(TrainingSchedule(config).validations_left(300, 1000) == 5);
  // ... and no more means than the run has step checkpoints (2 validations: the mean of 2).
  config.average_last = 8;
  config.valid_every = 6;
  CHECK(TrainingSchedule(config).validations_left(8, 12) == 2);
  config.valid_every = 250;
  // Before any validation its time is unknown: the ETA says so instead of counting 0 s for it.
  const auto untimed = schedule.eta({200, 1, 100}, {300, 1.5, 150}, RunPace{50, -1});
  CHECK(untimed.seconds == Approx(350));
  CHECK(untimed.validations_unknown);
  // Validation time does not slow the pace of the updates: 50 s of the 80 s were training.
  CHECK(schedule.eta({200, 1, 100}, {300, 1.5, 180}, RunPace{50, 30}).seconds == Approx(350 + 90));
}

TEST_CASE("a new best is strictly better; averaging takes the best mean, the fewest checkpoints on a tie",
          "[training_schedule]") {
  CHECK(TrainingSchedule::improves(false, 0, -5));  // the first validation always
  CHECK(TrainingSchedule::improves(true, 30.0, 30.5));
  CHECK_FALSE(TrainingSchedule::improves(true, 30.0, 30.0));  // a tie keeps the earlier best.pt
  CHECK_FALSE(TrainingSchedule::improves(true, -2.1, -2.2));  // the loss enters negated: higher is better
  CHECK(TrainingSchedule::averaging_choice({35.0}) == 1);
  CHECK(TrainingSchedule::averaging_choice({35.0, 36.0, 35.5}) == 2);
  CHECK(TrainingSchedule::averaging_choice({35.0, 36.0, 36.0, 34.0}) == 2);  // equal: fewer checkpoints
  CHECK(TrainingSchedule::averaging_choice({36.0, 35.0}) == 1);
  CHECK_THROWS_WITH(TrainingSchedule::averaging_choice({}), HasSubstring("no checkpoint"));
}
