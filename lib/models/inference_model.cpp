#include "nmt/models/inference_model.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/models/linear_path.h"
#include "nmt/models/registry.h"

namespace nmt {

InferenceModel::InferenceModel(LoadedModel loaded, Precision precision, const torch::Device& device,
                               WeightUpdates updates)
    : loaded_(std::move(loaded)), precision_(precision), device_(device) {
  // On the device first: the Transformer decides its kernels again when moved, and the
  // path converts the weights where they are. A no-op for a model already there.
  loaded_.model->to(device_);
  loaded_.model->use_linear_path(inference_path(precision_, device_, updates));
  loaded_.model->eval();
}

InferenceModelPtr set_up_for_inference(LoadedModel loaded, Precision precision, const torch::Device& device,
                                       WeightUpdates updates) {
  return std::make_shared<const InferenceModel>(std::move(loaded), precision, device, updates);
}

namespace {

// Restores the global CPU generator's state when it goes: building a network draws its
// initial weights from it, which would shift every later dropout mask of the run.
class KeepGeneratorState {
 public:
  KeepGeneratorState() : generator_(at::detail::getDefaultCPUGenerator()) {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    state_ = generator_.get_state();
  }
  ~KeepGeneratorState() {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    generator_.set_state(state_);
  }
  KeepGeneratorState(const KeepGeneratorState&) = delete;
  KeepGeneratorState& operator=(const KeepGeneratorState&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

}  // namespace

ModelPtr network_sharing_weights(const ModelConfig& config, Seq2SeqModel& model) {
  ModelPtr twin;
  {
    const KeepGeneratorState keep;
    twin = build_model(config);
  }
  torch::NoGradGuard no_grad;
  auto source_parameters = model.named_parameters();
  auto source_buffers = model.named_buffers();
  auto twin_parameters = twin->named_parameters();
  auto twin_buffers = twin->named_buffers();
  if (twin_parameters.size() != source_parameters.size() || twin_buffers.size() != source_buffers.size())
    throw Error("network_sharing_weights: the config does not describe the model");
  for (auto& item : twin_parameters) item.value().set_data(source_parameters[item.key()]);
  for (auto& item : twin_buffers) item.value().set_data(source_buffers[item.key()]);
  return twin;
}

}  // namespace nmt
