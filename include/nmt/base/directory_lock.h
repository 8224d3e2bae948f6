#pragma once
// An exclusive lock on a directory for the length of a process's work on it (flock on
// the directory itself: no lock file to leave behind, released by the kernel when the
// process dies, even by kill -9).
#include <string>

namespace nmt {

class DirectoryLock {
 public:
  DirectoryLock() = default;
  /// Locks `directory` (which must exist) or throws nmt::Error naming it when another
  /// process holds the lock.
  explicit DirectoryLock(const std::string& directory);
  /// Waits for the lock instead: for work that others may be doing already (preparing a
  /// shared corpus), where the second process should use the first one's result.
  static DirectoryLock wait_for(const std::string& directory);
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock();

  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace nmt
