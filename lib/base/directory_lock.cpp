#include "nmt/base/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "nmt/base/error.h"

namespace nmt {

DirectoryLock::DirectoryLock(const std::string& directory) {
  fd_ = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw Error("cannot open directory " + directory + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int reason = errno;
    ::close(fd_);
    fd_ = -1;
    if (reason == EWOULDBLOCK)
      throw Error(directory + " is in use by another process (another nmt-train on the same --model-dir?)");
    throw Error("cannot lock " + directory + ": " + std::strerror(reason));
  }
}

DirectoryLock DirectoryLock::wait_for(const std::string& directory) {
  DirectoryLock lock;
  lock.fd_ = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock.fd_ < 0) throw Error("cannot open directory " + directory + ": " + std::strerror(errno));
  while (::flock(lock.fd_, LOCK_EX) != 0) {
    if (errno != EINTR) throw Error("cannot lock " + directory + ": " + std::strerror(errno));
  }
  return lock;
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

}  // namespace nmt
