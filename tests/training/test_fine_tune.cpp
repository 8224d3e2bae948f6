// nmt-train --init-from: a new run that starts where a trained model is (its validation
// loss, not a fresh model's), with a fresh step count; a model section or tokenizer that
// differs is refused, and so is a model directory that already has a run.
#include "support/catch.h"
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "nmt/base/error.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/transformer/transformer_config.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

// The validation losses of a run's train.jsonl, by step.
std::map<int64_t, double> validation_losses(const std::string& model_dir) {
  std::ifstream log(model_dir + "/train.jsonl");
  std::map<int64_t, double> losses;
  for (std::string line; std::getline(log, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record.value("type", "") == "validation") losses[record.at("step").get<int64_t>()] = record.at("loss").get<double>();
  }
  return losses;
}

// One update with a learning rate too small to move the weights, validated after it.
TrainerOptions one_still_step(const ScratchDir& dir, const std::string& model_dir, const std::string& init_from) {
  auto config = test::tiny_config("transformer");
  config.train.learning_rate = 1e-12;
  config.train.max_steps = 1;
  config.train.valid_every = 1;
  auto options = test::tiny_trainer_options(dir, config, model_dir);
  options.init_from = init_from;
  return options;
}

}  // namespace

TEST_CASE("fine-tuning starts at the checkpoint's validation loss, with a fresh step count", "[trainer][fine-tune]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto config = test::tiny_config("transformer");
  config.train.max_steps = 20;
  train(test::tiny_trainer_options(dir, config, "base"));
  const auto base_losses = validation_losses(dir.file("base"));
  REQUIRE(base_losses.count(20) == 1);

  auto tuned = one_still_step(dir, "tuned", dir.file("base/last.pt"));
  tuned.source_spm = tuned.target_spm = "";  // the checkpoint's tokenizers are used
  const auto result = train(tuned);
  CHECK(result.steps == 1);
  const auto tuned_losses = validation_losses(dir.file("tuned"));
  REQUIRE(tuned_losses.count(1) == 1);
  CHECK(tuned_losses.at(1) == Approx(base_losses.at(20)).epsilon(1e-4));

  train(one_still_step(dir, "fresh", ""));
  CHECK(validation_losses(dir.file("fresh")).at(1) > base_losses.at(20) + 0.5);  // the test can tell them apart

  // The fine-tuned checkpoint holds the train section of its own run.
  const auto saved = load_model(dir.file("tuned/last.pt"));
  CHECK(saved.config.train.learning_rate == 1e-12);
  CHECK(saved.step == 1);
}

TEST_CASE("fine-tuning refuses another architecture, other tokenizers, and a directory with a run", "[trainer][fine-tune]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto config = test::tiny_config("transformer");
  config.train.max_steps = 2;
  train(test::tiny_trainer_options(dir, config, "base"));
  const auto checkpoint = dir.file("base/last.pt");

  auto wider = one_still_step(dir, "wider", checkpoint);
  wider.model_config_given = true;
  wider.config.model.section<TransformerConfig>().ffn_dim = 128;
  wider.config.model.dropout = 0.3;  // may change
  CHECK_THROWS_WITH(train(wider), HasSubstring("model.transformer.ffn_dim (stored 64, given 128)") &&
                                      !HasSubstring("dropout ("));
  CHECK(!std::filesystem::exists(dir.file("wider/last.pt")));

  auto dropout_only = one_still_step(dir, "dropout", checkpoint);
  dropout_only.model_config_given = true;
  dropout_only.config.model.dropout = 0.3;
  train(dropout_only);
  CHECK(load_model(dir.file("dropout/last.pt")).config.model.dropout == 0.3);

  test::other_tokenizer(dir);
  auto other_tokenizer = one_still_step(dir, "other", checkpoint);
  other_tokenizer.target_spm = dir.file("other.model");
  CHECK_THROWS_WITH(train(other_tokenizer), HasSubstring("the target tokenizer " + dir.file("other.model") +
                                                            " differs from the one in " + checkpoint));

  CHECK_THROWS_WITH(train(one_still_step(dir, "base", checkpoint)),
                    HasSubstring("base/last.pt exists; resume that run (without --init-from)"));
}
