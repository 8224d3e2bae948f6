#include "nmt/models/registry.h"


#include "nmt/base/config_section.h"
#include "nmt/base/error.h"
#include "nmt/base/named_registry.h"
#include "nmt/models/rnn/attention_seq2seq.h"
#include "nmt/models/rnn/gru_seq2seq.h"
#include "nmt/models/transformer/transformer.h"

namespace nmt {

namespace {

std::vector<ModelFamily>& registered_families() {
  static std::vector<ModelFamily> families = {
      gru_family(),
      attention_family(),
      transformer_family(),
  };
  return families;
}

}  // namespace

const std::vector<ModelFamily>& model_families() { return registered_families(); }

void register_model_family(ModelFamily family) {
  if (family.name.empty() || !family.validate || !family.build)
    throw Error("a model family needs a name, a validate and a build function");
  if (!family.settings_section.empty() && find_config_section(family.settings_section) == nullptr)
    throw Error("model family \"" + family.name + "\" names its settings model." + family.settings_section +
                ", which is not a registered config section (ConfigSectionRegistration)");
  if (registered_entry(registered_families(), family.name) != nullptr)
    throw Error("model family \"" + family.name + "\" is registered already");
  registered_families().push_back(std::move(family));
}

ScopedModelFamily::ScopedModelFamily(ModelFamily family) : name_(family.name) {
  register_model_family(std::move(family));
}

ScopedModelFamily::~ScopedModelFamily() { remove_registered(registered_families(), name_); }

const ModelFamily& find_model_family(const std::string& name) {
  return find_registered(model_families(), name, "model.arch \"" + name + "\" is not a model family");
}

std::vector<std::string> model_family_names() { return registered_names(model_families()); }

std::string model_family_list() { return registered_name_list(model_families()); }

void validate_model_config(const ModelConfig& config) { find_model_family(config.arch).validate(config); }

ModelPtr build_model(const ModelConfig& config) {
  if (config.source_vocab <= 0 || config.target_vocab <= 0)
    throw Error("model config lacks vocabulary sizes");
  const auto& family = find_model_family(config.arch);
  family.validate(config);
  return family.build(config);
}

}  // namespace nmt
