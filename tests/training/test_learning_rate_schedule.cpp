// The learning-rate schedules, and the plateau schedule's state: what a resumed run and the
// other ranks of a distributed one take over from it.
#include "support/catch.h"

#include "nmt/base/error.h"
#include "nmt/training/schedule.h"

using nmt::LearningRateSchedule;
using nmt::TrainConfig;

TEST_CASE("noam warms up linearly, then decays with the inverse square root", "[training_schedule]") {
  TrainConfig config;
  config.schedule = "noam";
  config.learning_rate = 1e-3;
  config.warmup_steps = 100;
  const LearningRateSchedule schedule(config);
  CHECK(schedule.rate(50) == Approx(5e-4));
  CHECK(schedule.rate(100) == Approx(1e-3));
  CHECK(schedule.rate(400) == Approx(5e-4));
}

TEST_CASE("plateau lowers the rate after its patience, and its state carries over", "[training_schedule]") {
  TrainConfig config;
  config.schedule = "plateau";
  config.learning_rate = 1e-3;
  config.plateau_patience = 2;
  config.plateau_factor = 0.5;
  config.min_learning_rate = 1e-4;
  LearningRateSchedule schedule(config);
  schedule.on_validation(false);
  CHECK(schedule.rate(10) == Approx(1e-3));  // one stall: within the patience
  schedule.on_validation(true);
  schedule.on_validation(false);
  CHECK(schedule.rate(10) == Approx(1e-3));  // an improvement started the count again
  schedule.on_validation(false);
  CHECK(schedule.rate(10) == Approx(5e-4));
  schedule.on_validation(false);  // one stall after the decay

  // Another schedule (a resumed run, another rank) takes the state over: the same rate,
  // and the next stall decays it, as it would have this one.
  LearningRateSchedule taken(config);
  taken.restore_state_values(schedule.state_values());
  CHECK(taken.rate(10) == Approx(5e-4));
  taken.on_validation(false);
  schedule.on_validation(false);
  CHECK(taken.rate(10) == Approx(2.5e-4));
  CHECK(taken.state_values() == schedule.state_values());
  // The floor.
  for (int i = 0; i < 10; ++i) taken.on_validation(false);
  CHECK(taken.rate(10) == Approx(1e-4));
  CHECK_THROWS_AS(taken.restore_state_values({1.0}), nmt::Error);
}
