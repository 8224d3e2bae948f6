#include "nmt/models/inference_flags.h"

#include "nmt/base/device.h"
#include "nmt/models/compute_description.h"
#include "nmt/models/ensemble.h"

namespace nmt {

InferenceFlags::InferenceFlags(CLI::App& app, ModelFlagCount count) : app_(app) {
  const std::string help =
      count == ModelFlagCount::ensemble
          ? "Checkpoint (DIR/best.pt from nmt-train). Repeat it for an ensemble (-m A.pt -m B.pt): per step the "
            "models' probabilities are averaged; they must share their tokenizers; attention (jsonl, coverage) "
            "is the first model's"
          : "Checkpoint (DIR/best.pt from nmt-train)";
  auto* model = app.add_option("-m,--model", model_paths_, help)
                    ->required()
                    ->allow_extra_args(false)  // one file each: a file after it is not taken for a second model
                    ->check(CLI::ExistingFile);
  if (count == ModelFlagCount::one) model->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  app.add_option("--precision", precision_, kPrecisionHelp)->check(CLI::IsMember(precision_names()))->capture_default_str();
  app.add_option("--device", device_, "cpu, cuda (the current GPU) or cuda:N")->capture_default_str();
  cli::add_verbose_option(app, verbose_);
}

InferenceModelPtr InferenceFlags::load() const {
  const auto device = parse_device(device_);
  auto model = set_up_for_inference(load_ensemble(model_paths_, device), parse_precision(precision_), device);
  if (verbose_) {
    cli::print_verbose(app_, checksum_notes(model->loaded()));
    cli::print_verbose(app_, describe_compute(model->network()));
  }
  return model;
}

}  // namespace nmt
