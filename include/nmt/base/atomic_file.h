#pragma once
// Files that appear whole or not at all: written to a temporary beside the target,
// flushed, then renamed over it. Killing the process never leaves a half-written file.
#include <string>
#include <vector>

namespace nmt {

/// The whole file as bytes. Throws nmt::Error "cannot open WHAT PATH".
std::string read_file(const std::string& path, const std::string& what);

/// Writes `contents` to `path` atomically. A symbolic link is followed (its target is
/// replaced); a FIFO or device is written in place, never replaced. Throws nmt::Error
/// "cannot write PATH: REASON"; on failure an existing regular file is left unchanged.
void write_file_atomically(const std::string& path, const std::string& contents);

/// Several files committed together: all temporaries are written (and synced) first, then
/// renamed one by one. What it guarantees: a failure before commit() changes no target;
/// each target is at any moment its old file or its whole new one, never a mix. What it
/// does not: the group is not one atomic step. A crash or a rename that fails during
/// commit() can leave the first targets new and the later ones old (commit() then throws
/// naming the target, and the temporaries not yet renamed are removed). Callers that need
/// the files to agree must check that on reading (checkpoints carry their step).
class AtomicFileGroup {
 public:
  AtomicFileGroup() = default;
  AtomicFileGroup(const AtomicFileGroup&) = delete;
  AtomicFileGroup& operator=(const AtomicFileGroup&) = delete;
  ~AtomicFileGroup();
  void write(const std::string& path, const std::string& contents);
  void commit();

 private:
  std::vector<std::pair<std::string, std::string>> pending_;  // temporary -> target
};

/// A file written in pieces that appears whole or not at all: into a temporary beside
/// the target, renamed over it by commit(); destroyed without commit(), the temporary is
/// removed and the target is unchanged. A FIFO or device is written in place.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& path);
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();
  /// Throws nmt::Error "cannot write PATH: REASON".
  void write(const std::string& bytes);
  void commit();

 private:
  std::string path_, target_, temporary_;  // temporary_ empty when writing in place
  int fd_ = -1;
};

/// `path`, or the file a symbolic link at `path` points to.
std::string resolve_write_target(const std::string& path);
/// A unique temporary name next to `path` (same directory, so rename is atomic):
/// "PATH.tmp.PID.N", so that a later run can tell the leftovers of dead writers.
std::string temporary_path_for(const std::string& path);
/// Takes the lock that marks an open temporary as being written (flock, released by the
/// kernel however the writer ends): what remove_stale_temporaries() leaves alone.
void hold_while_writing(int fd);
/// Removes "NAME.tmp.PID.N" files in `directory` (only those of `name`, when given) whose
/// writer is gone (killed in the middle of a write): no process holds its lock
/// (hold_while_writing), and PID names no process, or a zombie (killed, not yet reaped: a
/// second process waiting for the first one's lock sees it so). Returns the names removed.
std::vector<std::string> remove_stale_temporaries(const std::string& directory, const std::string& name = "");
/// The same for the temporaries of one output file (a symlink followed): returns their paths.
std::vector<std::string> remove_stale_temporaries_of(const std::string& path);

}  // namespace nmt
