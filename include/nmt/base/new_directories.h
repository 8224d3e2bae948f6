#pragma once
// The directories a command is about to create, remembered so that a command that fails
// can take them away again and leave the file system as it found it.
#include <filesystem>
#include <vector>

namespace nmt {

class NewDirectories {
 public:
  // Notes which of `directory` and its ancestors do not exist yet; creates nothing.
  explicit NewDirectories(const std::filesystem::path& directory);

  // Creates `directory` and its missing ancestors.
  void create() const;
  // Removes the noted directories that are empty, deepest first; never throws.
  void remove_empty() const noexcept;
  // Removes the outermost noted directory with everything in it; never throws.
  void remove_all() const noexcept;

 private:
  std::filesystem::path directory_;
  std::vector<std::filesystem::path> missing_;  // deepest first
};

}  // namespace nmt
