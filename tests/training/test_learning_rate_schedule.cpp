// The learning-rate schedules: pure policies over the step and the plateau state they are given.
#include "support/catch.h"

#include "nmt/training/schedule.h"

using nmt::LearningRateSchedule;
using nmt::TrainConfig;

TEST_CASE("noam warms up linearly, then decays with the inverse square root", "[training_schedule]") {
  TrainConfig config;
  config.schedule = "noam";
  config.learning_rate = 1e-3;
  config.warmup_steps = 100;
  const LearningRateSchedule schedule(config);
  CHECK(schedule.rate(50, {}) == Approx(5e-4));
  CHECK(schedule.rate(100, {}) == Approx(1e-3));
  CHECK(schedule.rate(400, {}) == Approx(5e-4));
}

TEST_CASE("plateau lowers the rate after its patience, from the state it is given", "[training_schedule]") {
  TrainConfig config;
  config.schedule = "plateau";
  config.learning_rate = 1e-3;
  config.plateau_patience = 2;
  config.plateau_factor = 0.5;
  config.min_learning_rate = 1e-4;
  const LearningRateSchedule schedule(config);
  nmt::PlateauState plateau;
  plateau = schedule.after_validation(plateau, false);
  CHECK(schedule.rate(10, plateau) == Approx(1e-3));  // one stall: within the patience
  plateau = schedule.after_validation(plateau, true);
  plateau = schedule.after_validation(plateau, false);
  CHECK(schedule.rate(10, plateau) == Approx(1e-3));  // an improvement started the count again
  plateau = schedule.after_validation(plateau, false);
  CHECK(schedule.rate(10, plateau) == Approx(5e-4));
  CHECK(plateau.stalled_validations == 0);
  // Another schedule of the same config (a resumed run, another rank) given the state: the
  // same rate, and the same reaction.
  const LearningRateSchedule other(config);
  CHECK(other.rate(10, plateau) == Approx(5e-4));
  CHECK(other.after_validation(plateau, false) == schedule.after_validation(plateau, false));
  // The floor.
  for (int i = 0; i < 20; ++i) plateau = schedule.after_validation(plateau, false);
  CHECK(schedule.rate(10, plateau) == Approx(1e-4));
  // Other schedules leave the state as it is.
  config.schedule = "noam";
  CHECK(LearningRateSchedule(config).after_validation(nmt::PlateauState{}, false) == nmt::PlateauState{});
}
