#include "nmt/base/new_directories.h"

namespace nmt {

NewDirectories::NewDirectories(const std::filesystem::path& directory)
    : directory_(std::filesystem::absolute(directory).lexically_normal()) {
  for (auto path = directory_; !path.empty() && !std::filesystem::exists(path); path = path.parent_path()) {
    missing_.push_back(path);
    if (path == path.parent_path()) break;
  }
}

void NewDirectories::create() const { std::filesystem::create_directories(directory_); }

void NewDirectories::remove_empty() const noexcept {
  std::error_code ignored;
  for (const auto& path : missing_) std::filesystem::remove(path, ignored);  // fails unless empty
}

void NewDirectories::remove_all() const noexcept {
  std::error_code ignored;
  if (!missing_.empty()) std::filesystem::remove_all(missing_.back(), ignored);
}

}  // namespace nmt
