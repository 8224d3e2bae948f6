#pragma once
// A model set up for inference, once: its Linear layers on inference_path(precision,
// device) (bf16 and int8 weights converted for good) and in eval mode. Everything that
// translates or validates (the Translator, nmt-serve, nmt-align, validation during
// training) reads it as const, so the path is decided here and nowhere else: no caller
// switches it around a call, and one set-up serves any number of Translators.
#include <memory>

#include "nmt/models/checkpoint.h"
#include "nmt/models/linear_path.h"
#include "nmt/models/precision.h"

namespace nmt {

class InferenceModel {
 public:
  /// Puts `loaded.model` on its inference path and in eval mode. nmt::Error for a precision
  /// this machine or family cannot run (the model is then left as it was). `updates`:
  /// whether its weights are a training run's, updated under it (validation's network).
  InferenceModel(LoadedModel loaded, Precision precision, const torch::Device& device,
                 WeightUpdates updates = WeightUpdates::none);

  const LoadedModel& loaded() const { return loaded_; }
  const Config& config() const { return loaded_.config; }
  Precision precision() const { return precision_; }
  const torch::Device& device() const { return device_; }
  /// The network, for the searches and scoring: a forward pass changes neither its
  /// weights nor its path (a search's state lives in its DecoderState), which is why a
  /// const InferenceModel may hand it out.
  Seq2SeqModel& network() const { return *loaded_.model; }

 private:
  LoadedModel loaded_;
  Precision precision_;
  torch::Device device_;
};

using InferenceModelPtr = std::shared_ptr<const InferenceModel>;

/// The usual way to make one: shared by a Translator and whatever else reads the model.
InferenceModelPtr set_up_for_inference(LoadedModel loaded, Precision precision, const torch::Device& device,
                                       WeightUpdates updates = WeightUpdates::none);

/// A second network of `model`'s architecture (`config`) whose every parameter and buffer
/// is `model`'s own tensor: it reads the weights as they change (training updates them in
/// place) and can sit on another path and mode without touching `model`'s. Built without
/// drawing from the global random generator, so training's dropout stream is unchanged.
ModelPtr network_sharing_weights(const ModelConfig& config, Seq2SeqModel& model);

}  // namespace nmt
