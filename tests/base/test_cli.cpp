// The conventions every tool shares: output before an error still reaches stdout, std::cout
// gets its own buffer back, range messages stay short, --threads beyond the cores.
#include "support/catch.h"
#include <fcntl.h>
#include <unistd.h>

#include <ATen/Parallel.h>

#include <iostream>
#include <thread>

#include "nmt/base/cli.h"
#include "nmt/base/error.h"
#include "nmt/base/atomic_file.h"
#include "support/test_util.h"

using namespace nmt;

namespace {

// Runs `body` as a tool with fd 1 sent to `path`; returns the tool's exit code.
int run_tool_into(const std::string& path, const std::function<int()>& body) {
  std::cout.flush();
  const int saved = ::dup(STDOUT_FILENO);
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(file, STDOUT_FILENO);
  ::close(file);
  CLI::App app{"test tool", "nmt-test"};
  cli::CommonOptions common;
  cli::add_common_options(app, common);
  const char* argv[] = {"nmt-test", "--threads", "1"};
  const int code = cli::run(app, common, 3, const_cast<char**>(argv), body);
  std::cout.flush();
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  return code;
}

std::string validation_message(const CLI::Validator& check, const std::string& value) {
  CLI::App app{"test", "nmt-test"};
  int number = 0;
  app.add_option("--number", number)->check(check);
  const char* argv[] = {"nmt-test", "--number", value.c_str()};
  try {
    app.parse(3, const_cast<char**>(argv));
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("output written before an error reaches stdout, and std::cout's buffer is given back", "[cli]") {
  test::ScratchDir dir;
  const auto before = std::cout.rdbuf();
  const int threads = at::get_num_threads();
  const int code = run_tool_into(dir.file("out.txt"), [] {
    std::cout << "a line written before the error\n";
    throw Error("something went wrong");
    return 0;
  });
  at::set_num_threads(threads);
  CHECK(code == cli::kExitFailure);
  CHECK(read_file(dir.file("out.txt"), "output") == "a line written before the error\n");
  CHECK(std::cout.rdbuf() == before);
}

TEST_CASE("range checks name the value and the bounds in a short message", "[cli]") {
  const auto threads = validation_message(cli::in_range(0, cli::kMaxThreads), "-1");
  CHECK(threads.find("-1 is not from 0 to 1024") != std::string::npos);
  CHECK(threads.size() < 80);
  CHECK(validation_message(cli::positive(), "0").find("0 is not above 0") != std::string::npos);
  CHECK(validation_message(cli::at_least(0), "-3").find("-3 is not 0 or more") != std::string::npos);
  CHECK(validation_message(cli::at_least(0), "many").find("many is not a number") != std::string::npos);
  CHECK(validation_message(cli::in_range(1, 32), "32").empty());
  CHECK(validation_message(cli::positive(), "1").empty());
}

TEST_CASE("more threads than cores uses the cores", "[cli]") {
  const int threads = at::get_num_threads();
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  CHECK(cli::apply_threads(cores + 7) == cores);
  CHECK(cli::apply_threads(1) == 1);
  CHECK(cli::apply_threads(0) == cores);
  at::set_num_threads(threads);
}
