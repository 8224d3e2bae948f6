#include "nmt/models/registry.h"

#include "nmt/base/error.h"
#include "nmt/models/rnn/attention_seq2seq.h"
#include "nmt/models/rnn/gru_seq2seq.h"
#include "nmt/models/transformer/transformer.h"

namespace nmt {

const std::vector<ModelFamily>& model_families() {
  static const std::vector<ModelFamily> families = {
      gru_family(),
      attention_family(),
      transformer_family(),
  };
  return families;
}

const ModelFamily& find_model_family(const std::string& name) {
  for (const auto& family : model_families())
    if (family.name == name) return family;
  throw Error("model.arch \"" + name + "\" is not a model family (registered: " + model_family_list() + ")");
}

std::vector<std::string> model_family_names() {
  std::vector<std::string> names;
  for (const auto& family : model_families()) names.push_back(family.name);
  return names;
}

std::string model_family_list() {
  std::string list;
  for (const auto& name : model_family_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

void validate_model_config(const ModelConfig& config) { find_model_family(config.arch).validate(config); }

ModelPtr build_model(const ModelConfig& config) {
  if (config.source_vocab <= 0 || config.target_vocab <= 0)
    throw Error("model config lacks vocabulary sizes");
  const auto& family = find_model_family(config.arch);
  family.validate(config);
  return family.build(config);
}

}  // namespace nmt
