// The full training-config check: ranges, the model family, and train.metric against the
// metric registry.
#include "support/catch.h"

#include "nmt/models/precision.h"
#include "nmt/models/registry.h"
#include "nmt/models/transformer/transformer_config.h"
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
                    HasSubstring("train.metric must be loss or a metric (bleu, chrf, exact_match), not \"meteor\""));
}

TEST_CASE("the check covers the family and the ranges", "[config]") {
  Config config;
  config.model.arch = "rnn";
  CHECK_THROWS_WITH(check_config(config), HasSubstring("expected gru, attention, transformer"));
  config.model.arch = "transformer";
  config.model.section<TransformerConfig>().d_model = 0;
  CHECK_THROWS_WITH(check_config(config), HasSubstring("d_model"));
  config = Config{};
  config.train.accumulate = 0;
  CHECK_THROWS_WITH(check_config(config), HasSubstring("train.accumulate"));
}

TEST_CASE("train.precision: fp32, bf16 or auto, for every family", "[config][precision]") {
  Config config;
  for (const auto& arch : model_family_names()) {
    config.model.arch = arch;
    for (const char* precision : {"fp32", "bf16", "auto"}) {
      config.train.precision = precision;
      CHECK_NOTHROW(check_config(config));
    }
  }
  config.train.precision = "fp16";
  CHECK_THROWS_WITH(check_config(config), HasSubstring("train.precision must be fp32, bf16 or auto"));
  const torch::Device cpu(torch::kCPU);
  CHECK(resolve_training_precision("fp32", cpu) == Precision::fp32);
  CHECK(resolve_training_precision("auto", cpu) ==
        (precision_supported(Precision::bf16, cpu) ? Precision::bf16 : Precision::fp32));
}
