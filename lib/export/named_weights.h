#pragma once
// A model's parameters and buffers by their LibTorch names, as the exporters read them.
#include <torch/nn/module.h>
#include <torch/types.h>

#include <functional>
#include <map>
#include <string>

namespace nmt {

class NamedWeights {
 public:
  NamedWeights(const torch::nn::Module& model, std::string model_name);

  bool has(const std::string& name) const { return tensors_.count(name) > 0; }
  /// The float32 weight `name`, detached; throws nmt::Error naming the model when it is
  /// missing or of another dtype (a converted model).
  torch::Tensor operator[](const std::string& name) const;

 private:
  std::string model_name_;
  std::map<std::string, torch::Tensor> tensors_;
};

/// Writes a model directory `directory` whole or not at all: `write` fills a temporary
/// directory beside it, which is then renamed. An existing `directory` is refused (nmt::Error)
/// unless `replace`; with it, the old directory is removed only once the new one is complete.
void write_model_directory(const std::string& directory, bool replace,
                           const std::function<void(const std::string& staged)>& write);

}  // namespace nmt
