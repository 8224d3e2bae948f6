// The model directory across runs: locking, runs at their limits, resume semantics,
// a failed start, train.jsonl without replayed steps, best.pt repair, step checkpoints.
#include <ATen/Parallel.h>
#include "support/catch.h"
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "nmt/base/atomic_file.h"
#include "nmt/base/directory_lock.h"
#include "nmt/base/error.h"
#include "nmt/models/checkpoint.h"
#include "support/tiny_task.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/models/transformer/transformer_config.h"

using namespace nmt;
using nmt::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

std::string run_file_bytes(const std::string& path) { return nmt::read_file(path, "file"); }

std::vector<nlohmann::json> records(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// How often each (type, step) pair occurs in train.jsonl.
std::map<std::pair<std::string, int64_t>, int> step_records(const std::string& path) {
  std::map<std::pair<std::string, int64_t>, int> counts;
  for (const auto& r : records(path))
    if (r.contains("step")) ++counts[{r["type"].get<std::string>(), r["step"].get<int64_t>()}];
  return counts;
}

TrainerOptions tiny_run(const ScratchDir& dir, int64_t max_steps) {
  auto config = test::tiny_config("gru");
  config.train.max_steps = max_steps;
  return test::tiny_trainer_options(dir, config, "run");
}

}  // namespace

TEST_CASE("a second run on a locked model directory fails at once, naming it", "[trainer][run_dir]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  fs::create_directories(dir.file("run"));
  DirectoryLock other_run(dir.file("run"));
  // flock is per open file description: the trainer's own open() of the directory conflicts.
  CHECK_THROWS_WITH(train(tiny_run(dir, 2)), HasSubstring(dir.file("run") + " is in use by another process"));
  CHECK(fs::is_empty(dir.file("run")));
}

TEST_CASE("a run already at its limit takes no step and rewrites no checkpoint", "[trainer][run_dir]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = tiny_run(dir, 6);
  REQUIRE(train(options).steps == 6);
  const auto last = run_file_bytes(dir.file("run/last.pt"));
  const auto best = run_file_bytes(dir.file("run/best.pt"));
  SECTION("the same command again") { CHECK(train(options).steps == 6); }
  SECTION("a lower --max-steps") {
    auto lower = options;
    lower.max_steps = 3;
    CHECK(train(lower).steps == 6);
  }
  CHECK(run_file_bytes(dir.file("run/last.pt")) == last);
  CHECK(run_file_bytes(dir.file("run/best.pt")) == best);
}

TEST_CASE("on resume a limit flag replaces only itself, other changes are errors", "[trainer][run_dir]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = tiny_run(dir, 3);
  options.config.train.max_epochs = 50;
  options.config.train.max_time_minutes = 30;
  train(options);

  SECTION("--max-steps alone keeps the stored max_epochs and max_time") {
    TrainerOptions resume = options;
    resume.config = Config{};  // as when nmt-train is given no --config
    resume.config_given = false;
    resume.max_steps = 5;
    CHECK(train(resume).steps == 5);
    const auto stored = load_model(dir.file("run/last.pt")).config.train;
    CHECK(stored.max_steps == 5);
    CHECK(stored.max_epochs == 50);
    CHECK(stored.max_time_minutes == 30);
  }
  SECTION("a changed model or training setting is refused with its name") {
    const auto before = run_file_bytes(dir.file("run/last.pt"));
    auto changed = options;
    changed.config_given = true;
    changed.config.model.section<RnnConfig>().hidden_dim = 64;
    changed.config.train.learning_rate = 0.01;
    CHECK_THROWS_WITH(train(changed), HasSubstring("model.rnn.hidden_dim (stored 32, given 64)") &&
                                          HasSubstring("train.learning_rate (stored 0.003, given 0.01)"));
    changed = options;
    changed.config_given = true;
    changed.config.model.arch = "attention";
    CHECK_THROWS_WITH(train(changed), HasSubstring("model.arch (stored \"gru\", given \"attention\")"));
    CHECK(run_file_bytes(dir.file("run/last.pt")) == before);
  }
  SECTION("the same config with a new limit is fine") {
    auto same = options;
    same.config_given = true;
    same.config.train.max_steps = 4;  // limits are not compared ...
    same.max_steps = 4;               // ... the flag replaces the stored one
    CHECK(train(same).steps == 4);
  }
}

TEST_CASE("a start that fails on its inputs leaves the directory as it was", "[trainer][run_dir]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = tiny_run(dir, 2);
  train(options);
  const auto config = run_file_bytes(dir.file("run/config.json"));
  const auto log = run_file_bytes(dir.file("run/train.jsonl"));
  test::copy_head(dir.file("valid.de"), dir.file("short.de"), 3);
  auto broken = options;
  broken.max_steps = 4;
  broken.valid_target = dir.file("short.de");
  CHECK_THROWS_WITH(train(broken), HasSubstring("short.de"));
  CHECK(run_file_bytes(dir.file("run/config.json")) == config);
  CHECK(run_file_bytes(dir.file("run/train.jsonl")) == log);
  // A fresh directory is not even created.
  auto fresh = broken;
  fresh.model_dir = dir.file("never");
  CHECK_THROWS(train(fresh));
  CHECK(!fs::exists(dir.file("never")));
}

TEST_CASE("train.jsonl holds each step once after interruptions, and errors are logged", "[trainer][run_dir]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = tiny_run(dir, 5);
  options.config.train.log_every = 1;
  options.config.train.save_every = 0;
  train(options);
  // As after a kill: steps 6 and 7 were logged, then the process died before last.pt moved on.
  {
    std::ofstream log(dir.file("run/train.jsonl"), std::ios::app);
    log << R"({"type":"progress","step":6,"loss":1})" << "\n" << R"({"type":"progress","step":7,"loss":1})" << "\n";
  }
  auto more = options;
  more.max_steps = 9;
  train(more);
  for (const auto& [key, count] : step_records(dir.file("run/train.jsonl"))) {
    INFO(key.first << " at step " << key.second);
    CHECK(count == 1);
  }
  CHECK(step_records(dir.file("run/train.jsonl")).count({"progress", 7}) == 1);

  // A failure after the checks (the log is open) is the session's last record.
  auto failing = more;
  failing.config.train.max_steps = 12;
  fs::remove(dir.file("run/last.pt"));        // a fresh start ...
  failing.config.train.learning_rate = 1e30;  // ... that diverges at its first update
  failing.config.train.clip_norm = 0;
  CHECK_THROWS_WITH(train(failing), HasSubstring("training loss became"));
  const auto all = records(dir.file("run/train.jsonl"));
  REQUIRE(!all.empty());
  CHECK(all.back()["type"] == "error");
  CHECK(all.back()["text"].get<std::string>().find("training loss became") != std::string::npos);
}

TEST_CASE("a best.pt lost between last.pt and best.pt is rewritten on resume", "[trainer][run_dir]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = tiny_run(dir, 5);  // validation at step 5 is the best so far
  train(options);
  const auto last = load_model(dir.file("run/last.pt"));
  REQUIRE(last.step == 5);
  fs::remove(dir.file("run/best.pt"));  // killed after last.pt, before best.pt
  train(options);                      // already at its limit: no step, but the repair
  const auto best = load_model(dir.file("run/best.pt"));
  CHECK(best.step == 5);
  const auto a = last.model->parameters(), b = best.model->parameters();
  for (size_t i = 0; i < a.size(); ++i) CHECK(torch::equal(a[i], b[i]));
}

TEST_CASE("keep_last keeps the newest K step checkpoints, off the validation grid too", "[trainer][run_dir]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = tiny_run(dir, 10);
  options.config.train.valid_every = 3;  // validations at 3, 6, 9 and the final one at 10
  options.config.train.keep_last = 2;
  train(options);
  CHECK(!fs::exists(dir.file("run/step-3.pt")));
  CHECK(!fs::exists(dir.file("run/step-6.pt")));
  CHECK(fs::exists(dir.file("run/step-9.pt")));
  CHECK(fs::exists(dir.file("run/step-10.pt")));
}

TEST_CASE("temporaries left by a killed writer are removed when a run starts", "[trainer][run_dir]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto options = tiny_run(dir, 2);
  train(options);
  test::write_text(dir.file("run/last.pt.tmp.999999999.0"), "half a checkpoint");
  options.max_steps = 3;
  train(options);
  CHECK(!fs::exists(dir.file("run/last.pt.tmp.999999999.0")));
}

TEST_CASE("validation pairs longer than the Transformer's positions are skipped, not fatal", "[trainer][run_dir]") {
  at::set_num_threads(1);
  ScratchDir dir;
  test::make_tiny_task(dir);
  std::string long_line;
  for (int i = 0; i < 40; ++i) long_line += "seven hundred seventy-seven thousand ";
  {
    std::ofstream en(dir.file("valid.en"), std::ios::app), de(dir.file("valid.de"), std::ios::app);
    en << long_line << "\n";
    de << "siebenhundert\n";
  }
  auto config = test::tiny_config("transformer");
  config.model.section<TransformerConfig>().max_positions = 64;
  config.train.max_steps = 2;
  config.train.valid_every = 1;
  config.train.valid_max_sentences = 0;
  CHECK(train(test::tiny_trainer_options(dir, config, "run")).steps == 2);
}
