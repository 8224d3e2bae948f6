#include "nmt/base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "nmt/base/error.h"

namespace nmt {
namespace {

void write_all(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(path.c_str());
      throw Error("cannot write " + path + ": " + std::strerror(saved));
    }
    written += static_cast<size_t>(n);
  }
  // fsync before rename: after a crash the file is either old or complete.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int saved = errno;
    ::unlink(path.c_str());
    throw Error("cannot write " + path + ": " + std::strerror(saved));
  }
}

void rename_or_throw(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    const int saved = errno;
    ::unlink(from.c_str());
    throw Error("cannot write " + to + ": " + std::strerror(saved));
  }
}

}  // namespace

std::string temporary_path_for(const std::string& path) {
  static std::atomic<int> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + what + " " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const auto temporary = temporary_path_for(path);
  write_all(temporary, contents);
  rename_or_throw(temporary, path);
}

AtomicFileGroup::~AtomicFileGroup() {
  for (const auto& entry : pending_) ::unlink(entry.first.c_str());
}

void AtomicFileGroup::write(const std::string& path, const std::string& contents) {
  const auto temporary = temporary_path_for(path);
  write_all(temporary, contents);
  pending_.emplace_back(temporary, path);
}

void AtomicFileGroup::commit() {
  for (const auto& [temporary, target] : pending_) rename_or_throw(temporary, target);
  pending_.clear();
}

}  // namespace nmt
