#include "nmt/base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "nmt/base/error.h"

namespace nmt {
namespace {

// Writes everything to an open descriptor; returns 0 or the errno of the failure.
int write_fd(int fd, const std::string& contents) {
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    written += static_cast<size_t>(n);
  }
  return 0;
}

void write_all(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
  int failure = write_fd(fd, contents);
  // fsync before rename: after a crash the file is either old or complete.
  if (failure == 0 && ::fsync(fd) != 0) failure = errno;
  if (::close(fd) != 0 && failure == 0) failure = errno;
  if (failure != 0) {
    ::unlink(path.c_str());
    throw Error("cannot write " + path + ": " + std::strerror(failure));
  }
}

// A FIFO, a terminal or a device is written as it is: replacing it by a regular file
// would break whoever reads it (and /dev/full must report its error).
void write_in_place(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
  int failure = write_fd(fd, contents);
  if (::close(fd) != 0 && failure == 0) failure = errno;
  if (failure != 0) throw Error("cannot write " + path + ": " + std::strerror(failure));
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

void hold_while_writing(int fd) { ::flock(fd, LOCK_EX | LOCK_NB); }  // a new file: nobody else holds it

namespace {

// Whether some process holds the lock of hold_while_writing() on `path`.
bool being_written(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // and our lock with it
  return held;
}

// No such process, or one that has ended and waits to be reaped (state Z or X).
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto name_end = line.rfind(')');  // the command name may hold spaces and parentheses
  if (name_end == std::string::npos || name_end + 2 >= line.size()) return false;
  const char state = line[name_end + 2];
  return state == 'Z' || state == 'X';
}

}  // namespace

std::vector<std::string> remove_stale_temporaries(const std::string& directory, const std::string& name) {
  static const std::regex temporary_name(R"((.+)\.tmp\.([0-9]+)\.[0-9]+)");
  std::vector<std::string> removed;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const auto file = entry.path().filename().string();
    std::smatch match;
    if (!entry.is_regular_file(error) || !std::regex_match(file, match, temporary_name)) continue;
    if (!name.empty() && match[1].str() != name) continue;
    const auto pid = static_cast<pid_t>(std::stoll(match[2].str()));
    if (pid == ::getpid() || being_written(entry.path().string()) || !process_gone(pid)) continue;
    if (std::filesystem::remove(entry.path(), error)) removed.push_back(file);
  }
  return removed;
}

std::vector<std::string> remove_stale_temporaries_of(const std::string& path) {
  const std::filesystem::path target = resolve_write_target(path);
  const auto directory = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::vector<std::string> removed;
  for (const auto& name : remove_stale_temporaries(directory.string(), target.filename().string()))
    removed.push_back((directory / name).string());
  return removed;
}

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + what + " " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string resolve_write_target(const std::string& path) {
  namespace fs = std::filesystem;
  // A symlink is followed (through chains, to a target that may not exist yet): its
  // target is what the user means, and must not be left stale behind a regular file.
  fs::path current = path;
  for (int depth = 0; depth < 40; ++depth) {
    std::error_code error;
    if (fs::symlink_status(current, error).type() != fs::file_type::symlink) return current.string();
    const auto target = fs::read_symlink(current, error);
    if (error) throw Error("cannot write " + path + ": cannot read the symbolic link: " + error.message());
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  throw Error("cannot write " + path + ": too many levels of symbolic links");
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const auto target = resolve_write_target(path);
  struct stat info;
  if (::stat(target.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    if (S_ISDIR(info.st_mode)) throw Error("cannot write " + path + ": it is a directory");
    write_in_place(target, contents);
    return;
  }
  const auto temporary = temporary_path_for(target);
  write_all(temporary, contents);
  rename_or_throw(temporary, target);
}

AtomicFileWriter::AtomicFileWriter(const std::string& path) : path_(path), target_(resolve_write_target(path)) {
  struct stat info;
  const bool special = ::stat(target_.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
  if (special && S_ISDIR(info.st_mode)) throw Error("cannot write " + path + ": it is a directory");
  if (!special) temporary_ = temporary_path_for(target_);
  const auto& opened = special ? target_ : temporary_;
  fd_ = ::open(opened.c_str(), special ? O_WRONLY : O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd_ < 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
  if (!special) hold_while_writing(fd_);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void AtomicFileWriter::write(const std::string& bytes) {
  if (fd_ < 0) throw Error("cannot write " + path_ + ": already committed");
  if (const int failure = write_fd(fd_, bytes); failure != 0)
    throw Error("cannot write " + path_ + ": " + std::strerror(failure));
}

void AtomicFileWriter::commit() {
  int failure = temporary_.empty() || ::fsync(fd_) == 0 ? 0 : errno;
  if (::close(fd_) != 0 && failure == 0) failure = errno;
  fd_ = -1;
  if (failure != 0) throw Error("cannot write " + path_ + ": " + std::strerror(failure));
  if (temporary_.empty()) return;
  rename_or_throw(temporary_, target_);
  temporary_.clear();
}

AtomicFileGroup::~AtomicFileGroup() {
  for (const auto& entry : pending_) ::unlink(entry.first.c_str());
}

void AtomicFileGroup::write(const std::string& path, const std::string& contents) {
  const auto target = resolve_write_target(path);
  struct stat info;
  if (::stat(target.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    throw Error("cannot write " + path + ": not a regular file");
  const auto temporary = temporary_path_for(target);
  write_all(temporary, contents);
  pending_.emplace_back(temporary, target);
}

void AtomicFileGroup::commit() {
  for (const auto& [temporary, target] : pending_) rename_or_throw(temporary, target);
  pending_.clear();
}

}  // namespace nmt
