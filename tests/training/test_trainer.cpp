// nmt-train's engine end to end on a tiny task: checkpoints, exact resume, bad input.
#include <ATen/Parallel.h>
#include "support/catch.h"
#include <torch/torch.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nmt/base/cpu_features.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/linear_path.h"
#include "nmt/base/error.h"
#include "nmt/models/registry.h"
#include "nmt/text/prepared_corpus.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void check_same_parameters(const std::string& a, const std::string& b) {
  const auto first = load_model(a), second = load_model(b);
  const auto pa = first.model->named_parameters(), pb = second.model->named_parameters();
  REQUIRE(pa.size() == pb.size());
  for (const auto& item : pa) {
    INFO(item.key());
    CHECK(torch::equal(item.value(), pb[item.key()]));
  }
}

}  // namespace

TEST_CASE("training writes self-contained checkpoints and a log", "[trainer]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  const auto result = train(test::tiny_trainer_options(dir, test::tiny_config("attention"), "run"));
  CHECK(result.steps == 10);
  CHECK(result.stop_reason == "reached max_steps");
  for (const char* name : {"last.pt", "best.pt", "config.json", "train.jsonl"})
    CHECK(std::filesystem::exists(dir.file(std::string("run/") + name)));
  const auto loaded = load_model(dir.file("run/last.pt"));
  CHECK(loaded.config.model.arch == "attention");
  CHECK(loaded.source_tokenizer.serialized() == Tokenizer::from_file(dir.file("spm.model")).serialized());
  // No temporary files are left behind by the atomic writes.
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("run")))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("training runs on its precision's path and gives the model back on fp32_torch", "[trainer][precision]") {
  at::set_num_threads(1);
  std::vector<Precision> precisions{Precision::fp32};
  if (precision_supported(Precision::bf16, torch::kCPU)) precisions.push_back(Precision::bf16);
  for (const auto precision : precisions) {
    INFO(precision_name(precision) << " on " << describe_cpu_features());
    ScratchDir dir;
    test::make_tiny_task(dir);
    auto config = test::tiny_config("transformer");
    config.train.max_steps = 6;  // a validation at step 5 in between
    config.train.precision = precision_name(precision);
    auto options = test::tiny_trainer_options(dir, config, "run");
    std::vector<LinearPath> seen;
    options.on_model_ready = [&](const Seq2SeqModel& model) { seen.push_back(model.linear_path()); };
    const auto result = train(options);
    REQUIRE(seen.size() == 1);
    // fp32: oneDNN's products with AVX-512, the BLAS's without (NMT_CPU_ISA=avx2 too).
    CHECK(seen[0] == training_path(precision, torch::kCPU));
    CHECK(result.model->linear_path() == LinearPath::fp32_torch);
  }
}

TEST_CASE("stopping and resuming gives the same model as an uninterrupted run", "[trainer]") {
  at::set_num_threads(1);  // reductions in a fixed order, so equality can be exact
  ScratchDir dir;
  test::make_tiny_task(dir);
  for (const auto& arch : model_family_names()) {
    DYNAMIC_SECTION(arch) {
      auto config = test::tiny_config(arch);
      config.train.max_steps = 12;  // crosses an epoch boundary
      const auto straight = train(test::tiny_trainer_options(dir, config, "straight"));

      auto first = test::tiny_trainer_options(dir, config, "resumed");
      first.config.train.max_steps = 7;  // stops between validations
      CHECK(train(first).steps == 7);
      auto second = test::tiny_trainer_options(dir, config, "resumed");
      second.resume = true;
      second.max_steps = 12;  // replaces the stored 7
      const auto resumed = train(second);

      CHECK(resumed.steps == straight.steps);
      CHECK(resumed.epochs_completed == straight.epochs_completed);
      CHECK(resumed.last_train_loss == straight.last_train_loss);
      check_same_parameters(dir.file("straight/last.pt"), dir.file("resumed/last.pt"));
    }
  }
}

TEST_CASE("a run on a prepared corpus equals the run on raw text bit for bit", "[trainer][prepared]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto config = test::tiny_config("transformer");
  config.train.max_length = 9;  // filtered at batch time: some pairs are left out
  const auto raw = train(test::tiny_trainer_options(dir, config, "raw"));
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  PrepareOptions prepare;
  prepare.source_path = dir.file("train.en"), prepare.target_path = dir.file("train.de");
  prepare.output_path = dir.file("train.nmtc");
  prepare.source_tokenizer = prepare.target_tokenizer = &tokenizer;
  prepare.threads = 2;
  prepare_corpus(prepare);
  auto options = test::tiny_trainer_options(dir, config, "prepared");
  options.train_source.clear(), options.train_target.clear();
  options.train_data = dir.file("train.nmtc");
  const auto prepared = train(options);
  CHECK(prepared.last_train_loss == raw.last_train_loss);
  check_same_parameters(dir.file("raw/last.pt"), dir.file("prepared/last.pt"));
  // The raw run prepared its training and validation pairs into its own data cache.
  const auto cached = std::filesystem::directory_iterator(dir.file("raw/data-cache"));
  CHECK(std::distance(cached, std::filesystem::directory_iterator()) == 2);  // train and valid
}

TEST_CASE("training rejects bad input without touching existing checkpoints", "[trainer]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = test::tiny_trainer_options(dir, test::tiny_config("gru"), "run");
  options.config.train.max_steps = 2;
  train(options);
  const auto before = file_bytes(dir.file("run/last.pt"));

  SECTION("a different tokenizer than the checkpoint's") {
    test::write_text(dir.file("other.txt"), "völlig andere Wörter hier\nund noch mehr davon\n");
    TokenizerTrainOptions spm;
    spm.inputs = {dir.file("train.en"), dir.file("other.txt")};
    spm.model_prefix = dir.file("other");
    spm.vocab_size = 70;
    train_tokenizer(spm);
    auto resume = options;
    resume.source_spm = dir.file("other.model");
    CHECK_THROWS_WITH(train(resume), HasSubstring("tokenizer") && HasSubstring("last.pt"));
  }
  SECTION("a missing training file") {
    auto missing = options;
    missing.train_source = dir.file("nope.en");
    CHECK_THROWS_WITH(train(missing), HasSubstring("nope.en"));
  }
  SECTION("training files of unequal length") {
    test::copy_head(dir.file("train.de"), dir.file("short.de"), 100);
    auto unequal = options;
    unequal.train_target = dir.file("short.de");
    CHECK_THROWS_WITH(train(unequal), HasSubstring("short.de") && HasSubstring("100"));
  }
  CHECK(file_bytes(dir.file("run/last.pt")) == before);
}

TEST_CASE("a fresh run refuses a missing tokenizer", "[trainer]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = test::tiny_trainer_options(dir, test::tiny_config("gru"), "run");
  options.source_spm = dir.file("absent.model");
  CHECK_THROWS_WITH(train(options), HasSubstring("absent.model"));
  CHECK_FALSE(std::filesystem::exists(dir.file("run/last.pt")));
}

TEST_CASE("a diverging run stops with an error instead of saving NaN weights", "[trainer]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto config = test::tiny_config("gru");
  config.train.learning_rate = 1e30;  // the first update blows the weights up
  config.train.clip_norm = 0;
  const auto handler = [](int) {};
  const auto before_int = std::signal(SIGINT, handler), before_term = std::signal(SIGTERM, handler);
  CHECK_THROWS_WITH(train(test::tiny_trainer_options(dir, config, "run")),
                    HasSubstring("training loss became") && HasSubstring("learning_rate"));
  CHECK_FALSE(std::filesystem::exists(dir.file("run/best.pt")));
  // The run's stop handlers are gone again, though it ended in an exception.
  CHECK(std::signal(SIGINT, before_int) == handler);
  CHECK(std::signal(SIGTERM, before_term) == handler);
}
