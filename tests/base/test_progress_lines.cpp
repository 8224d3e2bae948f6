// Progress lines: at most one per interval, built only when due, and a heartbeat that
// stops with its scope.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "support/catch.h"

#include "nmt/base/progress_lines.h"
#include "support/test_util.h"

using namespace nmt;

namespace {

// Runs `body` with fd 2 (where progress lines go) sent to `path`.
void with_stderr_into(const std::string& path, const std::function<void()>& body) {
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(file, STDERR_FILENO);
  ::close(file);
  body();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

long count_lines(const std::string& text) { return static_cast<long>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

TEST_CASE("progress lines wait for their interval and build their text only when due") {
  test::ScratchDir dir;
  const auto path = dir.file("stderr");
  int built = 0;
  with_stderr_into(path, [&] {
    ProgressLines quiet("nmt-test", std::chrono::hours(1));
    quiet.maybe_say([&] { ++built; return std::string("never"); });
    quiet.say("now");  // whatever the time
    ProgressLines every_time("nmt-test", std::chrono::seconds(0));
    every_time.maybe_say([&] { ++built; return std::string("3 lines translated"); });
    every_time.maybe_say([&] { ++built; return std::string("6 lines translated"); });
  });
  CHECK(built == 2);
  const auto text = file_text(path);
  CHECK(text.find("never") == std::string::npos);
  CHECK(text.find("nmt-test: now (0 s)\n") != std::string::npos);
  CHECK(text.find("nmt-test: 3 lines translated (0 s)\n") != std::string::npos);
  CHECK(text.find("nmt-test: 6 lines translated (0 s)\n") != std::string::npos);
  CHECK(count_lines(text) == 3);
}

TEST_CASE("a progress heartbeat speaks while its scope lasts and never after") {
  test::ScratchDir dir;
  const auto path = dir.file("stderr");
  long lines_at_end = 0;
  with_stderr_into(path, [&] {
    {
      const ProgressHeartbeat heartbeat("nmt-test", "training the tokenizer", std::chrono::milliseconds(5));
      // However slow the machine, two beats come (a loaded one only makes them later).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (count_lines(file_text(path)) < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    lines_at_end = count_lines(file_text(path));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  const auto text = file_text(path);
  CHECK(lines_at_end >= 2);
  CHECK(count_lines(text) == lines_at_end);  // the thread stopped with the scope
  CHECK(text.find("nmt-test: training the tokenizer (") == 0);
}
