#pragma once
// Sections of the model config that this layer does not know: model.<name>, each owned by the
// code that uses it (a model family's settings live in the family's folder and register
// themselves there, at load). Configs, checkpoints and --set overrides read, write, check and
// upgrade every registered section through its own field list, so a new family's settings
// need no change here.
//
// A section is a struct with
//   static constexpr const char* kSection = "transformer";   // model.transformer
//   template <typename V> void visit(V&& v) { v("d_model", d_model, kAtLeast1); ... }
// (config_fields.h), optionally
//   static constexpr OldFlatKey kOldFlatKeys[] = {{"d_model", "d_model"}, ...};
// (keys that configs written before the sections existed gave directly under "model"),
// registered by one ConfigSectionRegistration beside it.
#include <nlohmann/json.hpp>

#include <any>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <typeindex>
#include <vector>

#include "nmt/base/config_fields.h"
#include "nmt/base/error.h"

namespace nmt {

/// A key of an old flat model config (model.<old_name>) and its name in the section.
struct OldFlatKey {
  const char* old_name;
  const char* name;
};

/// What the config code needs of a section, whatever its type.
struct ConfigSectionType {
  std::string name;  ///< model.<name>
  std::type_index type = typeid(void);
  std::function<std::any()> make_default;
  /// The defaults, then the keys `object` gives; nmt::Error naming an unknown key or a wrong type.
  std::function<std::any(const nlohmann::json& object, const std::string& where)> read;
  std::function<nlohmann::json(const std::any&)> write;
  /// nmt::Error naming the first number field out of its range.
  std::function<void(const std::any&, const std::string& where)> check_ranges;
  std::vector<OldFlatKey> old_flat_keys;
};

/// Every registered section, in registration order.
const std::vector<ConfigSectionType>& config_sections();
/// The section called `name`, or null.
const ConfigSectionType* find_config_section(const std::string& name);

/// Registers a section while it lives: one at namespace scope beside the section's struct
/// (the library's families), or one in a scope (a test's family). nmt::Error if the name is taken.
class ConfigSectionRegistration {
 public:
  explicit ConfigSectionRegistration(ConfigSectionType type);
  ~ConfigSectionRegistration();
  ConfigSectionRegistration(const ConfigSectionRegistration&) = delete;
  ConfigSectionRegistration& operator=(const ConfigSectionRegistration&) = delete;

 private:
  std::string name_;
};

namespace config_sections_detail {
template <typename T, typename = void>
struct OldKeysOf {
  static std::vector<OldFlatKey> get() { return {}; }
};
template <typename T>
struct OldKeysOf<T, std::void_t<decltype(T::kOldFlatKeys)>> {
  static std::vector<OldFlatKey> get() { return {std::begin(T::kOldFlatKeys), std::end(T::kOldFlatKeys)}; }
};
}  // namespace config_sections_detail

/// The type-erased description of section struct T (see the top of this file).
template <typename T>
ConfigSectionType config_section_type() {
  ConfigSectionType type;
  type.name = T::kSection;
  type.type = typeid(T);
  type.make_default = [] { return std::any(T{}); };
  type.read = [](const nlohmann::json& object, const std::string& where) {
    T section;
    config_fields::read(object, section, where);
    return std::any(section);
  };
  type.write = [](const std::any& section) { return config_fields::write(std::any_cast<const T&>(section)); };
  type.check_ranges = [](const std::any& section, const std::string& where) {
    config_fields::check_ranges(std::any_cast<const T&>(section), where);
  };
  type.old_flat_keys = config_sections_detail::OldKeysOf<T>::get();
  return type;
}

/// The sections a ModelConfig holds, by name; a section never set reads as its defaults.
class ConfigSections {
 public:
  /// Section T, created with its defaults if absent (to be set).
  template <typename T>
  T& get() {
    auto it = values_.find(T::kSection);
    if (it == values_.end()) it = values_.emplace(T::kSection, std::any(T{})).first;
    return cast<T>(it->second);
  }
  /// Section T as set, or its defaults.
  template <typename T>
  const T& get() const {
    const auto it = values_.find(T::kSection);
    if (it == values_.end()) {
      static const T defaults{};
      return defaults;
    }
    return cast<T>(it->second);
  }
  /// Section `name` as read from a config (type-erased; the config code's).
  void set(const std::string& name, std::any value) { values_[name] = std::move(value); }
  /// Section `name` as set, or null.
  const std::any* find(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }

 private:
  template <typename T, typename Any>
  static auto& cast(Any& value) {
    using Result = std::conditional_t<std::is_const_v<Any>, const T, T>;
    auto* section = std::any_cast<Result>(&value);
    if (section == nullptr)
      throw Error(std::string("config section model.") + T::kSection + " holds another type (a bug)");
    return *section;
  }
  std::map<std::string, std::any> values_;
};

}  // namespace nmt
