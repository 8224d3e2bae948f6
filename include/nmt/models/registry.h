#pragma once
// The model families, by the name model.arch gives. Adding a family to the library is a
// new folder under models/ (the model, and its settings registered as a config section:
// nmt/base/config_section.h) plus one line in registry.cpp; one defined elsewhere registers
// itself (register_model_family, after its section). nmt-train --help, config validation, training, decoding,
// attention export and checkpoint loading all go through this list.
#include <functional>
#include <string>
#include <vector>

#include "nmt/base/config.h"
#include "nmt/models/model.h"

namespace nmt {

struct ModelFamily {
  std::string name;         ///< the value of model.arch
  std::string description;  ///< one line, for --help
  std::string settings_section;  ///< its section of the model config, model.<this>.*: a registered
                                 ///< config section (nmt/base/config_section.h), checked at registration
  /// Checks the family's own settings (its config section); throws nmt::Error naming the
  /// field. Vocabulary sizes are not checked here: they come from the tokenizers later.
  std::function<void(const ModelConfig&)> validate;
  /// A model with freshly initialised weights.
  std::function<ModelPtr(const ModelConfig&)> build;
};

/// Every registered family, in registration order: the library's own, then those added by
/// register_model_family. A reference into it lasts until the next (un)registration.
const std::vector<ModelFamily>& model_families();
/// Adds a family defined outside the library (a plugin, a test); nmt::Error if its name is
/// taken or a function is missing. Registration is not thread-safe: register before the
/// registry is read from several threads.
void register_model_family(ModelFamily family);

/// A family registered while this lives (tests): removed again when it goes.
class ScopedModelFamily {
 public:
  explicit ScopedModelFamily(ModelFamily family);
  ~ScopedModelFamily();
  ScopedModelFamily(const ScopedModelFamily&) = delete;
  ScopedModelFamily& operator=(const ScopedModelFamily&) = delete;

 private:
  std::string name_;
};
/// Throws nmt::Error listing the registered names if `name` is not one of them.
const ModelFamily& find_model_family(const std::string& name);
std::vector<std::string> model_family_names();
/// "gru, attention, transformer"
std::string model_family_list();

/// Validates config.arch and the family's settings (see ModelFamily::validate).
void validate_model_config(const ModelConfig& config);
/// Builds the family named by config.arch with freshly initialised weights.
ModelPtr build_model(const ModelConfig& config);

}  // namespace nmt
