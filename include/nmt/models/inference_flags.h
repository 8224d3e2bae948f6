#pragma once
// The flags of every tool that decodes with a model (nmt-translate, nmt-align, nmt-serve),
// declared in one place: -m/--model, --precision, --device and --verbose have the same
// names, short flags, checks and help in each tool, and become a model set up for
// inference the same way (what --verbose prints included).
#include <string>
#include <vector>

#include "nmt/base/cli.h"
#include "nmt/models/inference_model.h"

namespace nmt {

/// How many -m/--model flags a tool takes: one, or one or more for an ensemble.
enum class ModelFlagCount { one, ensemble };

class InferenceFlags {
 public:
  /// Declares the flags on `app` (which must outlive this object).
  InferenceFlags(CLI::App& app, ModelFlagCount count);

  /// After parsing: the model (or ensemble) loaded onto --device and set up at --precision;
  /// with --verbose, whether its files carried checksums and what computes it, on stderr.
  InferenceModelPtr load() const;

  const std::vector<std::string>& model_paths() const { return model_paths_; }
  /// The first model's file: the one model of a tool that takes one.
  const std::string& model_path() const { return model_paths_.front(); }
  bool verbose() const { return verbose_; }

 private:
  const CLI::App& app_;
  std::vector<std::string> model_paths_;
  std::string precision_ = "fp32";
  std::string device_ = "cpu";
  bool verbose_ = false;
};

}  // namespace nmt
