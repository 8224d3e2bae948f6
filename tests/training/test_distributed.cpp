// Data-parallel training with c10d/Gloo: real processes on localhost (the worker in
// tests/training/distributed/worker.cpp), compared with each other and with one process.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/catch.h"
#include "support/tensor_diff.h"
#include <chrono>
#include <random>
#include <thread>

#include "nmt/training/distributed.h"
#include "nmt/training/gradient_buckets.h"
#include "support/tiny_task.h"

extern char** environ;

using nmt::test::max_diff;

namespace {

using nmt::test::ScratchDir;
using Clock = std::chrono::steady_clock;

// Whether a TCP port on the loopback can be bound right now.
bool can_bind(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return bound;
}

// A port nobody listens on now, below the kernel's range for outgoing connections (32768
// and up by default): a port the kernel hands out can be taken by any connection of a test
// running beside this one (Gloo's, a server's, a client's) before rank 0 binds it, and the
// run then fails with "Address already in use". The tools' tests pick theirs in 20000-31999
// (cli_test.sh) or let the kernel choose; these take 10000-19999.
int free_port() {
  static std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> ports(10000, 19999);
  for (int attempt = 0; attempt < 1000; ++attempt)
    if (const int port = ports(random); can_bind(port)) return port;
  FAIL("no free port in 10000-19999");
  return -1;
}

struct Rank {
  pid_t pid = -1;
  std::string parameters, log;
};

// Starts one worker process as `rank` of `world_size`, stderr/stdout into `log`.
Rank start_rank(const ScratchDir& dir, int rank, int world_size, int port, int64_t max_steps, int timeout,
                const std::string& learning_rate = "") {
  Rank started;
  started.parameters = dir.file("rank" + std::to_string(rank) + ".pt");
  started.log = dir.file("rank" + std::to_string(rank) + ".log");
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  environment.push_back("RANK=" + std::to_string(rank));
  environment.push_back("WORLD_SIZE=" + std::to_string(world_size));
  environment.push_back("MASTER_ADDR=127.0.0.1");
  environment.push_back("MASTER_PORT=" + std::to_string(port));
  // Gloo on loopback, named: without it Gloo takes the address the hostname resolves to,
  // which differs between machines (and warns when there is none).
  environment.push_back("GLOO_SOCKET_IFNAME=lo");
  std::vector<std::string> arguments{NMT_DISTRIBUTED_WORKER, dir.path().string(), "multi", started.parameters,
                                     std::to_string(max_steps), std::to_string(timeout)};
  if (!learning_rate.empty()) arguments.push_back(learning_rate);
  const auto pointers = [](std::vector<std::string>& strings) {
    std::vector<char*> result;
    for (auto& s : strings) result.push_back(s.data());
    result.push_back(nullptr);
    return result;
  };
  auto argv = pointers(arguments);
  auto envp = pointers(environment);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, started.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  REQUIRE(posix_spawn(&started.pid, argv[0], &actions, nullptr, argv.data(), envp.data()) == 0);
  posix_spawn_file_actions_destroy(&actions);
  return started;
}

// The exit status, 128 + the signal's number when a signal ended it (as a shell reports it),
// or -1 when the process is still running after `seconds` (then killed).
int wait_for(const Rank& rank, double seconds) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(rank.pid, &status, WNOHANG) == rank.pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(rank.pid, SIGKILL);
  ::waitpid(rank.pid, nullptr, 0);
  return -1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<torch::Tensor> load_parameters(const std::string& path) {
  std::vector<torch::Tensor> parameters;
  torch::load(parameters, path);
  return parameters;
}

// One process with the workers' one thread: a product's summation order depends on the
// thread count, and so would the comparison below.
std::vector<torch::Tensor> train_single(const ScratchDir& dir, int64_t accumulate, const std::string& name) {
  auto config = nmt::test::deterministic_tiny_config();
  config.train.max_steps = 9;
  config.train.accumulate = accumulate;
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  struct RestoreThreads {
    int threads;
    ~RestoreThreads() { at::set_num_threads(threads); }
  } restore{threads};
  const auto result = nmt::train(nmt::test::tiny_trainer_options(dir, config, name));
  std::vector<torch::Tensor> parameters;
  for (const auto& p : result.model->parameters()) parameters.push_back(p.detach().clone());
  return parameters;
}

bool all_close(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::allclose(a[i], b[i], 1e-4, 1e-5)) return false;
  return true;
}

}  // namespace

TEST_CASE("two ranks on localhost train like one process with the same global batch", "[distributed]") {
  ScratchDir dir;
  nmt::test::make_tiny_task(dir);
  const int port = free_port();
  auto rank0 = start_rank(dir, 0, 2, port, 9, 60);
  auto rank1 = start_rank(dir, 1, 2, port, 9, 60);
  const int status0 = wait_for(rank0, 180), status1 = wait_for(rank1, 30);
  INFO("rank 0 log:\n" << read_file(rank0.log) << "\nrank 1 log:\n" << read_file(rank1.log));
  REQUIRE(status0 == 0);
  REQUIRE(status1 == 0);

  const auto parameters0 = load_parameters(rank0.parameters);
  const auto parameters1 = load_parameters(rank1.parameters);
  REQUIRE(parameters0.size() == parameters1.size());
  for (size_t i = 0; i < parameters0.size(); ++i) CHECK(torch::equal(parameters0[i], parameters1[i]));

  // 2 ranks x accumulate 1 see the same batches as 1 process x accumulate 2 ...
  const auto single = train_single(dir, 2, "single");
  CHECK(max_diff(parameters0, single) == 0);
  CHECK(all_close(parameters0, single));
  // ... and not the same as 1 process x accumulate 1 (so the comparison can fail).
  CHECK_FALSE(all_close(parameters0, train_single(dir, 1, "half")));

  // Rank 0 alone wrote the model directory and the log.
  CHECK(std::filesystem::exists(dir.file("multi/best.pt")));
  CHECK(std::filesystem::exists(dir.file("multi/last.pt")));
  CHECK(read_file(dir.file("multi/train.jsonl")).find("distributed: 2 ranks") != std::string::npos);
}

namespace {

// Starts 2 ranks on a long run, waits until they train, then does `what` to rank 1 and
// checks that rank 0 fails with a clear error within `timeout` (plus slack).
void check_rank_failure(int signal_to_rank1, int timeout) {
  ScratchDir dir;
  nmt::test::make_tiny_task(dir);
  const int port = free_port();
  auto rank0 = start_rank(dir, 0, 2, port, 1000000, timeout);
  auto rank1 = start_rank(dir, 1, 2, port, 1000000, timeout);
  // Wait until both are training (rank 0 logs a validation every 3 steps).
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (read_file(dir.file("multi/train.jsonl")).find("\"step\"") == std::string::npos && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(rank1.pid, signal_to_rank1);
  const auto hit = Clock::now();
  const int status0 = wait_for(rank0, timeout + 60);
  const double seconds = std::chrono::duration<double>(Clock::now() - hit).count();
  ::kill(rank1.pid, SIGKILL);
  wait_for(rank1, 10);
  const auto log = read_file(rank0.log);
  INFO("rank 0 log:\n" << log);
  CHECK(status0 == 1);
  CHECK(seconds < timeout + 20);  // the timeout at most, plus a validation
  CHECK(log.find("distributed training: rank 0 of 2 failed") != std::string::npos);
}

}  // namespace

TEST_CASE("when a rank dies the other stops with a clear error", "[distributed]") {
  check_rank_failure(SIGKILL, 20);
}

TEST_CASE("when a rank hangs the other stops with a clear error after the timeout", "[distributed]") {
  check_rank_failure(SIGSTOP, 10);
}

TEST_CASE("a rank that never joins fails the run within the timeout", "[distributed]") {
  ScratchDir dir;
  nmt::test::make_tiny_task(dir);
  const auto started = Clock::now();
  auto lonely = start_rank(dir, 0, 2, free_port(), 5, 3);
  const int status = wait_for(lonely, 60);
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  INFO(read_file(lonely.log));
  CHECK(status == 1);
  CHECK(seconds < 30);
  CHECK(read_file(lonely.log).find("could not join") != std::string::npos);
}

TEST_CASE("ranks that would train differently stop before the first step, naming the rank and what differs",
          "[distributed]") {
  ScratchDir dir;
  nmt::test::make_tiny_task(dir);
  const int port = free_port();
  auto rank0 = start_rank(dir, 0, 2, port, 5, 60);
  auto rank1 = start_rank(dir, 1, 2, port, 5, 60, "0.5");
  const int status0 = wait_for(rank0, 120), status1 = wait_for(rank1, 30);
  const auto log0 = read_file(rank0.log), log1 = read_file(rank1.log);
  INFO("rank 0 log:\n" << log0 << "\nrank 1 log:\n" << log1);
  CHECK(status0 == 1);
  CHECK(status1 == 1);
  for (const auto& log : {log0, log1}) {
    CHECK_THAT(log, HasSubstring("the ranks would not train the same model: rank 1 has another config: "
                                 "train.learning_rate 0.5 (rank 0: "));
    CHECK(log.find("\"step\"") == std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("multi/last.pt")));  // no step was taken
}

TEST_CASE("the first host of a Slurm node list is rank 0's address", "[distributed]") {
  CHECK(nmt::first_slurm_host("node07") == "node07");
  CHECK(nmt::first_slurm_host("node[07-09,12],gpu3") == "node07");
  CHECK(nmt::first_slurm_host("gpu3,node[1-2]") == "gpu3");
  CHECK(nmt::first_slurm_host("rack[2-3]-node[010-011]") == "rack2-node010");
  CHECK_THROWS_WITH(nmt::first_slurm_host(""), HasSubstring("names no host"));
  CHECK_THROWS_WITH(nmt::first_slurm_host("node[07-09"), HasSubstring("cannot read the host range"));
  CHECK_THROWS_WITH(nmt::first_slurm_host("node[]"), HasSubstring("cannot read the host range"));
}

TEST_CASE("distributed options come from Slurm's variables under srun, torchrun's winning", "[distributed]") {
  ::setenv("SLURM_PROCID", "5", 1);
  ::setenv("SLURM_NTASKS", "8", 1);
  ::setenv("SLURM_LOCALID", "1", 1);
  ::setenv("SLURM_JOB_NODELIST", "gpu[07-10]", 1);
  auto options = nmt::distributed_options_from_environment();
  CHECK(options.rank == 5);
  CHECK(options.world_size == 8);
  CHECK(options.local_rank == 1);
  CHECK(options.master_addr == "gpu07");
  ::setenv("MASTER_ADDR", "10.0.0.9", 1);  // a given address wins
  CHECK(nmt::distributed_options_from_environment().master_addr == "10.0.0.9");
  ::setenv("RANK", "2", 1);  // torchrun's variables win
  ::setenv("WORLD_SIZE", "4", 1);
  options = nmt::distributed_options_from_environment();
  CHECK(options.rank == 2);
  CHECK(options.world_size == 4);
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("MASTER_ADDR");
  ::setenv("SLURM_NTASKS", "eight", 1);
  CHECK_THROWS_WITH(nmt::distributed_options_from_environment(), HasSubstring("SLURM_NTASKS must be an integer"));
  ::setenv("SLURM_NTASKS", "8", 1);
  ::unsetenv("SLURM_JOB_NODELIST");
  CHECK_THROWS_WITH(nmt::distributed_options_from_environment(), HasSubstring("SLURM_JOB_NODELIST or MASTER_ADDR"));
  for (const char* name : {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}) ::unsetenv(name);
}

TEST_CASE("distributed options come from the torchrun variables and are checked", "[distributed]") {
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("RANK", "3", 1);
  ::setenv("MASTER_ADDR", "10.0.0.1", 1);
  ::setenv("MASTER_PORT", "1234", 1);
  auto options = nmt::distributed_options_from_environment();
  CHECK(options.world_size == 4);
  CHECK(options.rank == 3);
  CHECK(options.master_addr == "10.0.0.1");
  CHECK(options.master_port == 1234);
  CHECK_NOTHROW(options.validate());
  options.rank = 4;
  CHECK_THROWS_WITH(options.validate(), HasSubstring("rank must be in [0, world size 4)"));
  ::setenv("RANK", "two", 1);
  CHECK_THROWS_WITH(nmt::distributed_options_from_environment(), HasSubstring("RANK must be an integer"));
  for (const char* name : {"WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(name);
}

TEST_CASE("data-parallel training takes Gloo on the CPU and NCCL on CUDA, or says NCCL is missing",
          "[distributed][device]") {
  CHECK(nmt::distributed_backend_for(c10::Device(c10::kCPU)) == nmt::DistributedBackend::gloo);
  CHECK(nmt::backend_name(nmt::DistributedBackend::gloo) == "Gloo");
  CHECK(nmt::backend_name(nmt::DistributedBackend::nccl) == "NCCL");
  if (nmt::nccl_available()) {
    CHECK(nmt::distributed_backend_for(c10::Device(c10::kCUDA)) == nmt::DistributedBackend::nccl);
  } else {
    CHECK_THROWS_WITH(nmt::distributed_backend_for(c10::Device(c10::kCUDA)), HasSubstring("needs NCCL"));
  }
  CHECK(nmt::ProcessGroup(nmt::DistributedOptions{}).device() == c10::Device(c10::kCPU));  // a group of one, Gloo
}

TEST_CASE("gradient buckets follow the order backward reaches the parameters", "[distributed]") {
  // Five parameters; backward reached 3, then 1, then 4; 0 and 2 it did not reach.
  const auto order = nmt::backward_order({-1, 1, -1, 0, 2});
  CHECK(order == std::vector<size_t>{3, 1, 4, 2, 0});
  // Nothing reached: the reverse of registration, the order before the first update.
  CHECK(nmt::backward_order({-1, -1, -1}) == std::vector<size_t>{2, 1, 0});

  // Buckets of about 10 bytes in that order, a new one where the element type changes; a
  // parameter larger than a bucket is one alone.
  const std::vector<int64_t> bytes{4, 4, 4, 16, 4};
  const std::vector<int> type{0, 0, 1, 0, 0};
  CHECK(nmt::gradient_buckets(order, bytes, type, 10) ==
        std::vector<std::vector<size_t>>{{3}, {1, 4}, {2}, {0}});
}
