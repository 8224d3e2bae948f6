#include "nmt/models/model.h"

#include <utility>

#include "nmt/base/error.h"

namespace nmt {

void throw_wrong_state() {
  throw Error("decoder state of another model family passed to step()");
}

torch::Tensor Seq2SeqModel::forward_at(const torch::Tensor& source, const torch::Tensor& target_input,
                                       const torch::Tensor& positions) {
  const auto logits = forward(source, target_input).logits;
  return logits.reshape({-1, logits.size(-1)}).index_select(0, positions);
}

std::vector<LinearImpl*> Seq2SeqModel::linear_layers() {
  std::vector<LinearImpl*> layers;
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* linear = dynamic_cast<LinearImpl*>(module.get())) layers.push_back(linear);
  return layers;
}

std::vector<LayerComputation> Seq2SeqModel::layer_computations() const {
  return {{"Linear layers", describe_linear_path(linear_path(), device())}};
}

c10::Device Seq2SeqModel::device() const {
  const auto all = parameters();
  return all.empty() ? c10::Device(c10::kCPU) : all.front().device();
}

void Seq2SeqModel::use_linear_path(LinearPath path) {
  if (path == linear_path_) return;
  if (!runs_linear_path(path))
    throw Error(linear_path_name(path) + " (bf16 and int8 inference) is implemented for the transformer family "
                "only; this model decodes in fp32");
  if (converts_weights(linear_path_))
    throw Error("the model was converted to " + linear_path_name(linear_path_) + " and cannot be converted to " +
                linear_path_name(path) + " (its weights were rounded)");
  const auto layers = linear_layers();
  std::vector<LinearImpl::Converted> converted;
  for (const auto* layer : layers) converted.push_back(layer->convert_for(path));
  for (size_t i = 0; i < layers.size(); ++i) layers[i]->use_path(path, std::move(converted[i]));
  linear_path_ = path;
  if (converts_weights(path)) after_weights_converted();
}

LinearPathScope::LinearPathScope(Seq2SeqModel& model, LinearPath path) : model_(model), previous_(model.linear_path()) {
  if (converts_weights(path) || converts_weights(previous_))
    throw Error("a scoped Linear path must read the fp32 weights (the model is on " + linear_path_name(previous_) +
                ", the scope asks for " + linear_path_name(path) + ")");
  model_.use_linear_path(path);
}

// Between paths that read the fp32 weights nothing is converted, so going back cannot throw.
LinearPathScope::~LinearPathScope() { model_.use_linear_path(previous_); }

}  // namespace nmt
