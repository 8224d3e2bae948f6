// Checkpoint averaging: N copies of one model give it back; two give their mean;
// different configs or tokenizers are refused; a run with train.average_last writes it.
#include "support/catch.h"
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "nmt/base/error.h"
#include "nmt/models/average.h"
#include "nmt/models/registry.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/training/trainer.h"
#include "support/tiny_task.h"

using namespace nmt;

namespace {

std::vector<torch::Tensor> weights(const LoadedModel& model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model.model->parameters()) out.push_back(p.detach());
  return out;
}

void save(const test::ScratchDir& dir, const LoadedModel& model, const std::string& name, int64_t step) {
  save_checkpoint(dir.file(name), model.config, *model.model, model.source_tokenizer, model.target_tokenizer,
                  nullptr, step);
}

}  // namespace

TEST_CASE("averaging N copies of a checkpoint gives it back, bit for bit", "[average]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  const auto model = test::random_model(dir, "transformer", 4);
  save(dir, model, "a.pt", 7);
  const auto averaged = average_checkpoints({dir.file("a.pt"), dir.file("a.pt"), dir.file("a.pt")});
  const auto a = weights(model), b = weights(averaged);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(torch::equal(a[i], b[i]));
  CHECK(averaged.step == 7);
}

TEST_CASE("averaging two checkpoints gives their mean", "[average]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  for (const auto& arch : model_family_names()) {  // every registered family
    const auto first = test::random_model(dir, arch, 1), second = test::random_model(dir, arch, 2);
    save(dir, first, arch + "-1.pt", 10);
    save(dir, second, arch + "-2.pt", 20);
    write_average({dir.file(arch + "-1.pt"), dir.file(arch + "-2.pt")}, dir.file(arch + "-avg.pt"));
    const auto averaged = load_model(dir.file(arch + "-avg.pt"));
    const auto a = weights(first), b = weights(second), m = weights(averaged);
    for (size_t i = 0; i < a.size(); ++i) {
      const auto mean = ((a[i].to(torch::kFloat64) + b[i].to(torch::kFloat64)) / 2).to(torch::kFloat);
      CHECK(torch::equal(m[i], mean));
    }
    CHECK(averaged.step == 20);
  }
}

TEST_CASE("checkpoints of different models or tokenizers are not averaged", "[average]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  const auto transformer = test::random_model(dir, "transformer", 1);
  auto wider = transformer;
  wider.config.model.section<TransformerConfig>().ffn_dim = 128;
  wider.model = build_model(wider.config.model);
  save(dir, transformer, "a.pt", 1);
  save(dir, wider, "b.pt", 2);
  CHECK_THROWS_WITH(average_checkpoints({dir.file("a.pt"), dir.file("b.pt")}),
                    HasSubstring("cannot average") && HasSubstring("model configs differ"));
  auto other_tokenizer = transformer;
  other_tokenizer.target_tokenizer = test::other_tokenizer(dir);
  save(dir, other_tokenizer, "c.pt", 3);
  CHECK_THROWS_WITH(average_checkpoints({dir.file("a.pt"), dir.file("c.pt")}), HasSubstring("tokenizers differ"));
  CHECK_THROWS(average_checkpoints({}));
}

namespace {

// The validation score train.jsonl gives the mean of the newest `m` step checkpoints.
double logged_mean_score(const std::string& log_path, int m) {
  std::ifstream log(log_path);
  const std::string key = "mean of the newest " + std::to_string(m) + " step checkpoints: ";
  for (std::string line; std::getline(log, line);) {
    const auto at = line.find(key);
    if (at == std::string::npos) continue;
    const auto value = line.substr(at + key.size());
    return std::stod(value.substr(value.find(' ') + 1));
  }
  FAIL("no score for the mean of the newest " << m << " in " << log_path);
  return 0;
}

}  // namespace

TEST_CASE("train.average_last writes averaged.pt: the newest checkpoints' mean best on validation", "[average][trainer]") {
  at::set_num_threads(1);
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  auto config = test::tiny_config("gru");
  config.train.max_steps = 9;
  config.train.valid_every = 3;
  config.train.keep_last = 2;
  config.train.average_last = 2;
  train(test::tiny_trainer_options(dir, config, "run"));
  REQUIRE(std::filesystem::exists(dir.file("run/averaged.pt")));
  // Both candidates were validated; the better one was written (loss: lower is better).
  const double newest = logged_mean_score(dir.file("run/train.jsonl"), 1);
  const double both = logged_mean_score(dir.file("run/train.jsonl"), 2);
  // The newest alone holds the final weights, validated at step 9: that score is reused.
  std::ifstream log(dir.file("run/train.jsonl"));
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK(text.find("mean of the newest 1 step checkpoints: " + config.train.metric) != std::string::npos);
  CHECK(text.find("(the final weights, validated above)") != std::string::npos);
  const bool lower_is_better = config.train.metric == "loss";
  const bool take_both = lower_is_better ? both < newest : both > newest;
  INFO("metric " << config.train.metric << ": newest " << newest << ", both " << both);
  const auto expected = take_both ? average_checkpoints({dir.file("run/step-6.pt"), dir.file("run/step-9.pt")})
                                  : average_checkpoints({dir.file("run/step-9.pt")});
  const auto written = load_model(dir.file("run/averaged.pt"));
  const auto a = weights(expected), b = weights(written);
  for (size_t i = 0; i < a.size(); ++i) CHECK(torch::equal(a[i], b[i]));
  config.train.average_last = 3;  // more than keep_last keeps
  CHECK_THROWS_WITH(config.validate(), HasSubstring("average_last"));
}
