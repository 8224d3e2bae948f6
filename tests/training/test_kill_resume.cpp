// Fault test: nmt-train killed with SIGKILL at 20 random moments (many during checkpoint
// writes: last.pt is written after every update), each time started again on the same
// directory, ends with parameters bitwise equal to an uninterrupted run's, no temporary
// file left, and each step logged once. A tiny Transformer without dropout on one thread,
// so that the two runs compute exactly the same numbers.
#include "support/catch.h"
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "nmt/models/checkpoint.h"
#include "support/tiny_task.h"

extern char** environ;

using namespace nmt;
namespace fs = std::filesystem;

namespace {

pid_t start_training(const test::ScratchDir& dir, const std::string& model_dir) {
  std::vector<std::string> args = {std::string(NMT_BINARY_DIR) + "/bin/nmt-train",
                                   "--config", dir.file("tiny.json"),
                                   "--train-src", dir.file("train.en"), "--train-tgt", dir.file("train.de"),
                                   "--valid-src", dir.file("valid.en"), "--valid-tgt", dir.file("valid.de"),
                                   "--src-spm", dir.file("spm.model"), "--tgt-spm", dir.file("spm.model"),
                                   "--model-dir", model_dir, "--threads", "1", "--quiet"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, dir.file("stderr.txt").c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Exit status, or -signal.
int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

std::vector<torch::Tensor> parameters_of(const std::string& path) {
  auto loaded = load_model(path);
  std::vector<torch::Tensor> out;
  for (const auto& p : loaded.model->parameters()) out.push_back(p.detach().clone());
  return out;
}

bool bitwise_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

void check_same_run(const std::string& model_dir, const std::string& reference) {
  INFO(model_dir);
  for (const char* name : {"last.pt", "best.pt", "step-80.pt"}) {
    INFO(name);
    CHECK(bitwise_equal(parameters_of(model_dir + "/" + name), parameters_of(reference + "/" + name)));
  }
  for (const auto& entry : fs::directory_iterator(model_dir)) {
    INFO(entry.path());
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  }
  std::map<std::pair<std::string, int64_t>, int> seen;
  std::ifstream log(model_dir + "/train.jsonl");
  for (std::string line; std::getline(log, line);) {
    const auto record = nlohmann::json::parse(line);  // no torn line either
    if (record.contains("step")) ++seen[{record["type"].get<std::string>(), record["step"].get<int64_t>()}];
  }
  for (const auto& [key, count] : seen) {
    INFO(key.first << " at step " << key.second);
    CHECK(count == 1);
  }
  CHECK(seen.count({"validation", 80}) == 1);
}

}  // namespace

TEST_CASE("nmt-train killed at 20 random points resumes to the uninterrupted result", "[trainer][faults]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir, 300);
  auto config = test::deterministic_tiny_config();
  config.train.schedule = "constant";
  config.train.max_steps = 80;
  config.train.valid_every = 8;
  config.train.save_every = 1;  // a checkpoint write after every update: many kills land in one
  config.train.keep_last = 2;
  test::write_text(dir.file("tiny.json"), config_to_json(config).dump());

  const auto started = std::chrono::steady_clock::now();
  REQUIRE(wait_for(start_training(dir, dir.file("reference"))) == 0);
  const auto run_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  INFO("an uninterrupted run took " << run_ms.count() << " ms");

  std::mt19937 random(12345);
  // Startup (loading, tokenizing) takes part of a run; the rest is 80 small steps.
  std::uniform_int_distribution<int> delay_ms(50, 700);
  int kills = 0;
  // Rounds of kill-and-restart on fresh directories until 20 kills happened (a fast
  // machine finishes a run in fewer); every round must end where the reference did.
  for (int round = 0; kills < 20 && round < 10; ++round) {
    const auto model_dir = dir.file("killed-" + std::to_string(round));
    for (int status = -SIGKILL; status == -SIGKILL && kills < 20;) {
      const pid_t pid = start_training(dir, model_dir);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
      ::kill(pid, SIGKILL);
      status = wait_for(pid);
      if (status == -SIGKILL) ++kills;
    }
    INFO(std::ifstream(dir.file("stderr.txt")).rdbuf());
    REQUIRE(wait_for(start_training(dir, model_dir)) == 0);  // runs to the end (or finds it done)
    check_same_run(model_dir, dir.file("reference"));
  }
  CHECK(kills == 20);
}
