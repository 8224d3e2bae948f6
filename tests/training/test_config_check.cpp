// The full training-config check: ranges, the model family, and train.metric against the
// metric registry.
#include <catch2/catch.hpp>

#include "nmt/training/config_check.h"

using namespace nmt;

TEST_CASE("train.metric must be loss or a registered metric", "[config]") {
  Config config;
  for (const char* metric : {"loss", "bleu", "chrf", "exact_match"}) {
    config.train.metric = metric;
    CHECK_NOTHROW(check_config(config));
  }
  config.train.metric = "meteor";
  CHECK_THROWS_WITH(check_config(config),
                    Catch::Contains("train.metric must be loss or a metric (bleu, chrf, exact_match), not \"meteor\""));
}

TEST_CASE("the check covers the family and the ranges", "[config]") {
  Config config;
  config.model.arch = "rnn";
  CHECK_THROWS_WITH(check_config(config), Catch::Contains("registered: gru, attention, transformer"));
  config.model.arch = "transformer";
  config.model.transformer.d_model = 0;
  CHECK_THROWS_WITH(check_config(config), Catch::Contains("d_model"));
  config = Config{};
  config.train.accumulate = 0;
  CHECK_THROWS_WITH(check_config(config), Catch::Contains("train.accumulate"));
}
