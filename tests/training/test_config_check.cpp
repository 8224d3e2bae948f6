// The full training-config check: ranges, the model family, and train.metric against the
// metric registry.
#include <catch2/catch.hpp>

#include "nmt/models/precision.h"
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

TEST_CASE("train.precision: fp32, bf16 for the Transformer, or auto", "[config][precision]") {
  Config config;
  config.model.arch = "transformer";
  for (const char* precision : {"fp32", "bf16", "auto"}) {
    config.train.precision = precision;
    CHECK_NOTHROW(check_config(config));
  }
  config.train.precision = "fp16";
  CHECK_THROWS_WITH(check_config(config), Catch::Contains("train.precision must be fp32, bf16 or auto"));
  config.model.arch = "gru";
  config.train.precision = "bf16";
  CHECK_THROWS_WITH(check_config(config), Catch::Contains("transformer family only"));
  config.train.precision = "auto";  // resolves to fp32 for the RNNs
  CHECK_NOTHROW(check_config(config));
  const torch::Device cpu(torch::kCPU);
  CHECK(resolve_training_precision("auto", "gru", cpu) == Precision::fp32);
  CHECK(resolve_training_precision("fp32", "transformer", cpu) == Precision::fp32);
  CHECK(resolve_training_precision("auto", "transformer", cpu) ==
        (precision_supported(Precision::bf16, cpu) ? Precision::bf16 : Precision::fp32));
}
