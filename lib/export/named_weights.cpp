#include "named_weights.h"

#include <torch/torch.h>

#include <filesystem>
#include <system_error>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/base/new_directories.h"

namespace nmt {

namespace fs = std::filesystem;

NamedWeights::NamedWeights(const torch::nn::Module& model, std::string model_name) : model_name_(std::move(model_name)) {
  for (const auto& item : model.named_parameters()) tensors_[item.key()] = item.value();
  for (const auto& item : model.named_buffers()) tensors_[item.key()] = item.value();
}

torch::Tensor NamedWeights::operator[](const std::string& name) const {
  const auto found = tensors_.find(name);
  if (found == tensors_.end()) throw Error(model_name_ + ": no weight " + name + " (a Transformer checkpoint has one)");
  if (found->second.scalar_type() != torch::kFloat32)
    throw Error(model_name_ + ": weight " + name + " is " + c10::toString(found->second.scalar_type()) +
                ", float32 expected");
  return found->second.detach();
}

namespace {


// Moves the finished `staged` directory to `target`; an old `target` goes only after that.
void put_in_place(const fs::path& staged, const fs::path& target, bool replace) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(target))) {
    fs::rename(staged, target, error);
    if (error) throw Error("cannot create " + target.string() + ": " + error.message());
    return;
  }
  if (!replace) throw Error(target.string() + " exists (--force replaces it)");
  if (!fs::is_directory(fs::symlink_status(target)))
    throw Error(target.string() + " exists and is not a directory: not replaced");
  const fs::path old = temporary_path_for(target.string());
  fs::rename(target, old, error);
  if (error) throw Error("cannot replace " + target.string() + ": " + error.message());
  fs::rename(staged, target, error);
  if (error) {
    fs::rename(old, target);  // the old directory back where it was
    throw Error("cannot replace " + target.string() + ": " + error.message());
  }
  fs::remove_all(old, error);
}

}  // namespace

void write_model_directory(const std::string& directory, bool replace,
                           const std::function<void(const std::string& staged)>& write) {
  fs::path target = fs::absolute(directory).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "DIR/"
  if (target == target.root_path()) throw Error("--output " + directory + ": a new directory's path expected");
  if (fs::exists(fs::symlink_status(target)) && !replace) throw Error(directory + " exists (--force replaces it)");
  const NewDirectories parents(target.parent_path());
  parents.create();
  const fs::path staged = temporary_path_for(target.string());
  std::error_code error;
  if (!fs::create_directory(staged, error) || error) {
    parents.remove_empty();
    throw Error("cannot create a directory beside " + directory + ": " + error.message());
  }
  try {
    write(staged.string());
    put_in_place(staged, target, replace);
  } catch (...) {
    fs::remove_all(staged, error);
    parents.remove_empty();
    throw;
  }
}

}  // namespace nmt
