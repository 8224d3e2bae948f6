#include "nmt/base/config.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "nmt/base/error.h"
#include "nmt/base/named_registry.h"

namespace nmt {
namespace {

using nlohmann::json;

// The registered sections (config_section.h). A function's static: registrations run at
// load, from other files, in an order no one chooses.
std::vector<ConfigSectionType>& section_registry() {
  static std::vector<ConfigSectionType> sections;
  return sections;
}

// Moves old flat keys of a "model" object into their sections (each section lists its own).
json upgrade_flat_model(json model, const std::string& where) {
  if (!model.is_object()) return model;
  for (const auto& section_type : config_sections())
    for (const auto& key : section_type.old_flat_keys) {
      const auto it = model.find(key.old_name);
      if (it == model.end()) continue;
      auto& section = model[section_type.name];
      if (!section.is_object()) section = json::object();  // the old key wins over nothing
      if (section.contains(key.name))
        throw Error(where + ": \"" + key.old_name + "\" and \"" + section_type.name + "." + key.name +
                    "\" both given (the first is the old name of the second)");
      section[key.name] = std::move(*it);
      model.erase(key.old_name);
    }
  return model;
}

// "model.d_model" -> "model.transformer.d_model"; other names as they are.
std::string upgrade_flat_name(const std::string& name) {
  if (name.rfind("model.", 0) != 0) return name;
  const auto key = name.substr(6);
  for (const auto& section_type : config_sections())
    for (const auto& old_key : section_type.old_flat_keys)
      if (key == old_key.old_name) return "model." + section_type.name + "." + old_key.name;
  return name;
}

ModelConfig read_model(const json& object, const std::string& where) {
  ModelConfig model;
  config_fields::read(upgrade_flat_model(object, where), model, where, [&](const std::string& key, const json& value) {
    const auto* section_type = find_config_section(key);
    if (section_type == nullptr) return false;
    model.sections.set(key, section_type->read(value, where + "." + key));
    return true;
  });
  return model;
}

// Every registered section is written, set or not: a checkpoint describes its model whole.
json write_model(const ModelConfig& model) {
  json object = config_fields::write(model);
  for (const auto& section_type : config_sections()) {
    const auto* value = model.sections.find(section_type.name);
    object[section_type.name] = section_type.write(value ? *value : section_type.make_default());
  }
  return object;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw Error("invalid config: " + message);
}

}  // namespace

std::string Interval::describe() const {
  auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return std::string(text);
  };
  if (high == kNoLimit) return (low_open ? "> " : ">= ") + number(low);
  return "in " + std::string(low_open ? "(" : "[") + number(low) + ", " + number(high) + (high_open ? ")" : "]");
}

const std::vector<ConfigSectionType>& config_sections() { return section_registry(); }

const ConfigSectionType* find_config_section(const std::string& name) {
  return registered_entry(section_registry(), name);
}

ConfigSectionRegistration::ConfigSectionRegistration(ConfigSectionType type) : name_(type.name) {
  if (find_config_section(type.name) != nullptr)
    throw Error("config section model." + type.name + " is registered twice");
  ModelConfig().visit([&](const char* key, auto&...) {
    if (type.name == key) throw Error("config section model." + type.name + " would hide the model's own key");
  });
  section_registry().push_back(std::move(type));
}

ConfigSectionRegistration::~ConfigSectionRegistration() { remove_registered(section_registry(), name_); }

void Config::validate() const {
  const auto& m = model;
  const auto& t = train;
  config_fields::check_ranges(m, "model");
  for (const auto& section_type : config_sections())
    if (const auto* section = m.sections.find(section_type.name))
      section_type.check_ranges(*section, "model." + section_type.name);
  config_fields::check_ranges(t, "train");
  require(!m.arch.empty(), "model.arch is empty");
  require(t.schedule == "constant" || t.schedule == "noam" || t.schedule == "plateau",
          "train.schedule must be constant, noam or plateau");
  require(t.schedule != "noam" || t.warmup_steps > 0,
          "train.warmup_steps must be > 0 with schedule noam (its rate is peak * min(step / warmup, "
          "sqrt(warmup / step))); use schedule constant for a fixed rate");
  require(t.precision == "fp32" || t.precision == "bf16" || t.precision == "auto",
          "train.precision must be fp32, bf16 or auto");
  require(t.allreduce_precision == "fp32" || t.allreduce_precision == "fp16",
          "train.allreduce_precision must be fp32 or fp16");
  require(!t.metric.empty(), "train.metric is empty");
  require(t.average_last <= t.keep_last,
          "train.average_last must be between 0 and train.keep_last (the step checkpoints it averages)");
}

Config config_from_json(const json& document, const std::string& origin) {
  if (!document.is_object()) throw Error(origin + ": expected a JSON object");
  Config config;
  for (const auto& item : document.items()) {
    if (item.key() == "model")
      config.model = read_model(item.value(), origin + ": model");
    else if (item.key() == "train")
      config_fields::read(item.value(), config.train, origin + ": train");
    else
      throw Error(origin + ": unknown section \"" + item.key() + "\" (expected model, train)");
  }
  return config;
}

json config_to_json(const Config& config) {
  return {{"model", write_model(config.model)}, {"train", config_fields::write(config.train)}};
}

Config load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open config " + path);
  json document;
  try {
    document = json::parse(in);
  } catch (const json::exception& e) {  // a parse error, or a number no double holds (out_of_range)
    throw Error(path + ": invalid JSON: " + e.what());
  }
  return config_from_json(document, path);
}

void apply_override(Config& config, const std::string& assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || assignment.find('.') > equals)
    throw Error("override \"" + assignment + "\" is not of the form section.key=value");
  const std::string name = upgrade_flat_name(assignment.substr(0, equals));
  const auto text = assignment.substr(equals + 1);
  json value = json::parse(text, nullptr, false);
  if (value.is_discarded()) value = text;  // bare words are strings: arch=gru
  auto document = config_to_json(config);
  json* node = &document;
  std::stringstream parts(name);
  for (std::string part; std::getline(parts, part, '.');) {
    if (!node->is_object() || !node->contains(part))
      throw Error("override \"" + assignment + "\": unknown key " + name);
    node = &(*node)[part];
  }
  if (node->is_object())
    throw Error("override \"" + assignment + "\": " + name + " is a section; set one of its keys");
  *node = value;
  config = config_from_json(document, "override \"" + assignment + "\"");
}

}  // namespace nmt
