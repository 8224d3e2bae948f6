#pragma once
// Files that appear whole or not at all: written to a temporary beside the target,
// flushed, then renamed over it. Killing the process never leaves a half-written file.
#include <string>
#include <vector>

namespace nmt {

/// The whole file as bytes. Throws nmt::Error "cannot open WHAT PATH".
std::string read_file(const std::string& path, const std::string& what);

/// Writes `contents` to `path` atomically. Throws nmt::Error naming the path.
void write_file_atomically(const std::string& path, const std::string& contents);

/// Several files committed together: all temporaries are written first, then renamed.
/// If anything fails before commit(), the temporaries are removed and no target changes.
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

/// A unique temporary name next to `path` (same directory, so rename is atomic).
std::string temporary_path_for(const std::string& path);

}  // namespace nmt
