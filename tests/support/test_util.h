#pragma once
// Small helpers shared by the tests: scratch directories and file writing.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace nmt::test {

/// A fresh directory under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir() {
    std::random_device device;
    path_ = std::filesystem::temp_directory_path() /
            ("nmt-test-" + std::to_string(device()) + std::to_string(device()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// Directory of the checked-in test data.
inline std::string source_path(const std::string& relative) {
  return std::string(NMT_SOURCE_DIR) + "/" + relative;
}

}  // namespace nmt::test
