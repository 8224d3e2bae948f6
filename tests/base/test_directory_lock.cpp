// The model-directory lock: exclusive between processes, released when its holder ends.
#include "support/catch.h"
#include <sys/wait.h>
#include <unistd.h>

#include "nmt/base/directory_lock.h"
#include "nmt/base/error.h"
#include "support/test_util.h"

using namespace nmt;

namespace {

// Whether another process could take the lock now (flock is per open file, so the test
// asks a child process).
bool another_process_can_lock(const std::string& directory) {
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      DirectoryLock lock(directory);
      ::_exit(0);
    } catch (const Error&) {
      ::_exit(3);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("a locked directory cannot be locked by another process", "[lock]") {
  test::ScratchDir dir;
  {
    DirectoryLock lock(dir.path().string());
    CHECK(lock.held());
    CHECK(!another_process_can_lock(dir.path().string()));
  }
  CHECK(another_process_can_lock(dir.path().string()));
  CHECK_THROWS_WITH(DirectoryLock(dir.file("missing")), HasSubstring("cannot open directory"));
}
