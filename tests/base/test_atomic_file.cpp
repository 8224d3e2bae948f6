// Atomic writes: regular files replaced whole, symlinks followed, FIFOs and devices
// written in place, failures leaving the old file, dead writers' temporaries removed.
#include "support/catch.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "support/test_util.h"

using namespace nmt;
namespace fs = std::filesystem;

TEST_CASE("a symlink is followed: its target gets the new contents", "[atomic_file]") {
  test::ScratchDir dir;
  test::write_text(dir.file("real.txt"), "old");
  fs::create_symlink(dir.file("real.txt"), dir.file("link.txt"));
  write_file_atomically(dir.file("link.txt"), "new");
  CHECK(fs::is_symlink(dir.file("link.txt")));
  CHECK(read_file(dir.file("real.txt"), "file") == "new");
  // Also through the streaming writer, and for a link to a file that does not exist yet.
  fs::create_symlink(dir.file("later.txt"), dir.file("dangling.txt"));
  AtomicFileWriter writer(dir.file("dangling.txt"));
  writer.write("a");
  writer.write("b");
  writer.commit();
  CHECK(fs::is_symlink(dir.file("dangling.txt")));
  CHECK(read_file(dir.file("later.txt"), "file") == "ab");
}

TEST_CASE("a FIFO is written in place, never replaced", "[atomic_file]") {
  test::ScratchDir dir;
  const auto fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_file(fifo, "fifo"); });
  write_file_atomically(fifo, "through the pipe");
  reader.join();
  CHECK(received == "through the pipe");
  CHECK(fs::is_fifo(fifo));
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}) == 1);  // no temporary left
}

TEST_CASE("a full device is an error naming the path and the reason", "[atomic_file]") {
  if (!fs::exists("/dev/full")) return;
  CHECK_THROWS_WITH(write_file_atomically("/dev/full", "x"), HasSubstring("cannot write /dev/full: No space left"));
  AtomicFileWriter writer("/dev/full");
  CHECK_THROWS_WITH(writer.write("x"), HasSubstring("No space left"));
  CHECK(fs::is_character_file("/dev/full"));
}

TEST_CASE("a streaming write that is not committed leaves the old file", "[atomic_file]") {
  test::ScratchDir dir;
  test::write_text(dir.file("out.jsonl"), "old\n");
  {
    AtomicFileWriter writer(dir.file("out.jsonl"));
    writer.write("half of the new");
  }  // destroyed without commit: the run failed
  CHECK(read_file(dir.file("out.jsonl"), "file") == "old\n");
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}) == 1);
  CHECK_THROWS_WITH(write_file_atomically(dir.path().string(), "x"), HasSubstring("is a directory"));
}

TEST_CASE("temporaries of dead writers are removed, live ones kept", "[atomic_file]") {
  test::ScratchDir dir;
  // A child that exits at once: its pid is then (almost surely) free.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const auto dead = "last.pt.tmp." + std::to_string(child) + ".0";
  const auto live = "best.pt.tmp." + std::to_string(::getppid()) + ".3";
  test::write_text(dir.file(dead), "x");
  test::write_text(dir.file(live), "x");
  test::write_text(dir.file("notes.tmp.txt"), "x");
  const auto removed = remove_stale_temporaries(dir.path().string());
  CHECK(removed == std::vector<std::string>{dead});
  CHECK(!fs::exists(dir.file(dead)));
  CHECK(fs::exists(dir.file(live)));
  CHECK(fs::exists(dir.file("notes.tmp.txt")));
}

TEST_CASE("a killed writer's temporary is stale before it is reaped; one being written is kept", "[atomic_file]") {
  test::ScratchDir dir;
  // A child that has ended but is not reaped: a zombie, as a killed preparer is to the
  // process that waited for its lock (its PID still answers kill(pid, 0)).
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  siginfo_t ended{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &ended, WEXITED | WNOWAIT) == 0);
  const auto pid = std::to_string(child);
  const auto killed = "c.nmtc.tmp." + pid + ".0", held = "c.nmtc.tmp." + pid + ".1", other = "d.nmtc.tmp." + pid + ".0";
  for (const auto& name : {killed, held, other}) test::write_text(dir.file(name), "x");
  const int writer = ::open(dir.file(held).c_str(), O_WRONLY | O_CLOEXEC);  // a writer still at work
  hold_while_writing(writer);
  const auto removed = remove_stale_temporaries(dir.path().string(), "c.nmtc");
  CHECK(removed == std::vector<std::string>{killed});
  CHECK(fs::exists(dir.file(held)));
  CHECK(fs::exists(dir.file(other)));  // another output's: not asked for
  ::close(writer);
  ::waitpid(child, nullptr, 0);
}
