#pragma once
// How a config section lists its fields, once, for reading, writing and checking alike: a
// member `visit(v)` calling v("key", field) for a string or a flag and v("key", field, range)
// for a number. A number field without its range does not compile, so none goes unchecked.
// Sections: ModelConfig, TrainConfig (config.h) and each model family's settings
// (config_section.h).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>

#include "nmt/base/error.h"

namespace nmt {

/// The values a number field may take.
struct Interval {
  double low, high;
  bool low_open = false, high_open = false;
  constexpr bool contains(double v) const {
    return (low_open ? v > low : v >= low) && (high_open ? v < high : v <= high);  // false for NaN
  }
  /// ">= 1", "in [0, 1)"
  std::string describe() const;
};
inline constexpr double kNoLimit = std::numeric_limits<double>::infinity();
inline constexpr Interval kAtLeast0{0, kNoLimit}, kAtLeast1{1, kNoLimit}, kAbove0{0, kNoLimit, true},
    kFraction{0, 1, false, true};

namespace config_fields {

template <typename Field>
constexpr bool is_number = std::is_arithmetic_v<Field> && !std::is_same_v<Field, bool>;

inline bool type_matches(const nlohmann::json& value, const std::string&) { return value.is_string(); }
inline bool type_matches(const nlohmann::json& value, const bool&) { return value.is_boolean(); }
inline bool type_matches(const nlohmann::json& value, const int64_t&) { return value.is_number_integer(); }
inline bool type_matches(const nlohmann::json& value, const double&) { return value.is_number(); }

inline const char* type_name(const std::string&) { return "a string"; }
inline const char* type_name(const bool&) { return "true or false"; }
inline const char* type_name(const int64_t&) { return "an integer"; }
inline const char* type_name(const double&) { return "a number"; }

/// Sets the fields of `section` given in `object` (the others keep their values); a key the
/// section does not list, or a value of the wrong type, is an nmt::Error naming it.
/// `extra_key(key, value)` may claim keys the visit does not list (returns true if it did).
template <typename Section, typename ExtraKey>
void read(const nlohmann::json& object, Section& section, const std::string& where, ExtraKey&& extra_key) {
  if (!object.is_object()) throw Error(where + ": expected a JSON object");
  std::set<std::string> known;
  section.visit([&](const char* key, auto& field, auto... /*range*/) {
    known.insert(key);
    const auto it = object.find(key);
    if (it == object.end()) return;
    if (!type_matches(*it, field))
      // replace: a value with invalid UTF-8 (from --set) is shown with U+FFFD, not thrown on.
      throw Error(where + "." + key + ": expected " + type_name(field) + ", got " +
                  it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    it->get_to(field);
  });
  for (const auto& item : object.items())
    if (!known.count(item.key()) && !extra_key(item.key(), item.value()))
      throw Error(where + ": unknown key \"" + item.key() + "\"");
}

template <typename Section>
void read(const nlohmann::json& object, Section& section, const std::string& where) {
  read(object, section, where, [](const std::string&, const nlohmann::json&) { return false; });
}

/// Every field of `section` as a JSON object.
template <typename Section>
nlohmann::json write(Section section) {
  nlohmann::json object = nlohmann::json::object();
  section.visit([&](const char* key, auto& field, auto... /*range*/) { object[key] = field; });
  return object;
}

/// Checks every number field of `section` (named `where`) against its range; nmt::Error
/// "invalid config: model.dropout is 2; it must be in [0, 1)".
template <typename Section>
void check_ranges(Section section, const std::string& where) {
  section.visit([&](const char* key, auto& field, auto... range) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (is_number<Field>) {
      static_assert(sizeof...(range) == 1, "a number field of a config section names its range");
      const Interval interval = (range, ...);
      if (!interval.contains(static_cast<double>(field))) {
        std::ostringstream value;
        value << field;
        throw Error("invalid config: " + where + "." + key + " is " + value.str() + "; it must be " +
                    interval.describe());
      }
    } else {
      static_assert(sizeof...(range) == 0, "only a number field has a range");
    }
  });
}

}  // namespace config_fields
}  // namespace nmt
