// Checkpoints: save -> load gives the same outputs; damaged or foreign files are refused.
#include "support/catch.h"
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "support/model_checks.h"
#include "nmt/models/checkpoint.h"
#include "nmt/base/error.h"
#include "nmt/models/registry.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

TEST_CASE("checkpoint save -> load gives identical outputs for every family", "[checkpoint]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  for (const auto& arch : model_family_names()) {  // every registered family
    SECTION(arch) {
      auto config = test::tiny_config(arch);
      config.model.source_vocab = config.model.target_vocab = tokenizer.vocab_size();
      torch::manual_seed(3);
      auto model = build_model(config.model);
      model->eval();
      save_checkpoint(dir.file(arch + ".pt"), config, *model, tokenizer, tokenizer);
      const auto loaded = load_model(dir.file(arch + ".pt"));
      CHECK(loaded.config.model.arch == arch);
      CHECK(!loaded.model->is_training());
      const auto source = torch::tensor({{5, 6, 7, 8, 3}, {9, 4, 3, 0, 0}}, torch::kInt64);
      const auto target = torch::tensor({{2, 4, 5, 6}, {2, 7, 8, 9}}, torch::kInt64);
      torch::NoGradGuard no_grad;
      CHECK(torch::equal(model->forward(source, target).logits, loaded.model->forward(source, target).logits));
    }
  }
}

TEST_CASE("loading refuses missing, truncated and foreign files", "[checkpoint]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  CHECK_THROWS_WITH(load_model(dir.file("absent.pt")), HasSubstring("absent.pt"));
  test::write_text(dir.file("text.pt"), "this is not a checkpoint\n");
  CHECK_THROWS_WITH(load_model(dir.file("text.pt")), HasSubstring("text.pt"));

  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  auto config = test::tiny_config("gru");
  config.model.source_vocab = config.model.target_vocab = tokenizer.vocab_size();
  auto model = build_model(config.model);
  save_checkpoint(dir.file("good.pt"), config, *model, tokenizer, tokenizer);
  std::ifstream in(dir.file("good.pt"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  test::write_text(dir.file("cut.pt"), bytes.substr(0, bytes.size() / 2));
  CHECK_THROWS_WITH(load_model(dir.file("cut.pt")), HasSubstring("cut.pt"));
  CHECK_THROWS_AS(load_model(dir.file("cut.pt")), nmt::Error);
}

TEST_CASE("the source piece counts travel with the checkpoint, one per source piece", "[checkpoint]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  auto config = test::tiny_config("gru");
  config.model.source_vocab = config.model.target_vocab = tokenizer.vocab_size();
  auto model = build_model(config.model);
  save_checkpoint(dir.file("without.pt"), config, *model, tokenizer, tokenizer);
  CHECK(load_model(dir.file("without.pt")).source_piece_counts.empty());  // older files: not recorded

  std::vector<int64_t> counts(static_cast<size_t>(tokenizer.vocab_size()));
  for (size_t id = 0; id < counts.size(); ++id) counts[id] = static_cast<int64_t>(id * 7 % 5);
  save_checkpoint(dir.file("with.pt"), config, *model, tokenizer, tokenizer, nullptr, 12, counts);
  CHECK(load_model(dir.file("with.pt")).source_piece_counts == counts);

  counts.pop_back();
  CHECK_THROWS_WITH(save_checkpoint(dir.file("bad.pt"), config, *model, tokenizer, tokenizer, nullptr, 12, counts),
                    HasSubstring("source piece counts for"));
  CHECK(!std::filesystem::exists(dir.file("bad.pt")));
}
