#pragma once
// A small JSON Schema checker for the keywords docs/*.schema.json use: type, required,
// properties, additionalProperties (false), items, enum, minimum, maximum, pattern and
// local $ref. An unknown keyword is an error, so the schema can't quietly go unchecked.
#include <nlohmann/json.hpp>

#include <regex>
#include <set>
#include <string>
#include <vector>

namespace nmt::test {

class SchemaChecker {
 public:
  explicit SchemaChecker(nlohmann::json schema) : root_(std::move(schema)) {}

  /// Problems found, each "path: what"; empty when `value` conforms.
  std::vector<std::string> check(const nlohmann::json& value) const {
    std::vector<std::string> problems;
    check(value, root_, "$", problems);
    return problems;
  }

 private:
  static bool has_type(const nlohmann::json& value, const std::string& type) {
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "integer") return value.is_number_integer();
    if (type == "number") return value.is_number();
    if (type == "null") return value.is_null();
    throw std::runtime_error("schema: unknown type " + type);
  }

  const nlohmann::json& resolve(const std::string& ref) const {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0) throw std::runtime_error("schema: unsupported $ref " + ref);
    return root_.at("$defs").at(ref.substr(prefix.size()));
  }

  void check(const nlohmann::json& value, const nlohmann::json& schema, const std::string& path,
             std::vector<std::string>& problems) const {
    static const std::set<std::string> ignored = {"$schema", "$id", "title", "description", "$defs"};
    for (const auto& [keyword, rule] : schema.items()) {
      if (ignored.count(keyword)) continue;
      if (keyword == "$ref") {
        check(value, resolve(rule.get<std::string>()), path, problems);
      } else if (keyword == "type") {
        if (!has_type(value, rule.get<std::string>())) problems.push_back(path + ": not of type " + rule.get<std::string>());
      } else if (keyword == "enum") {
        if (std::find(rule.begin(), rule.end(), value) == rule.end()) problems.push_back(path + ": not in enum");
      } else if (keyword == "minimum") {
        if (value.is_number() && value.get<double>() < rule.get<double>()) problems.push_back(path + ": below minimum");
      } else if (keyword == "maximum") {
        if (value.is_number() && value.get<double>() > rule.get<double>()) problems.push_back(path + ": above maximum");
      } else if (keyword == "pattern") {
        if (value.is_string() && !std::regex_match(value.get<std::string>(), std::regex(rule.get<std::string>())))
          problems.push_back(path + ": does not match " + rule.get<std::string>());
      } else if (keyword == "required") {
        for (const auto& name : rule)
          if (value.is_object() && !value.contains(name.get<std::string>()))
            problems.push_back(path + ": missing " + name.get<std::string>());
      } else if (keyword == "properties") {
        if (!value.is_object()) continue;
        for (const auto& [name, sub] : rule.items())
          if (value.contains(name)) check(value.at(name), sub, path + "." + name, problems);
      } else if (keyword == "additionalProperties") {
        if (!value.is_object() || rule.get<bool>()) continue;
        for (const auto& [name, sub] : value.items())
          if (!schema.at("properties").contains(name)) problems.push_back(path + ": unexpected property " + name);
      } else if (keyword == "items") {
        if (!value.is_array()) continue;
        for (size_t i = 0; i < value.size(); ++i) check(value[i], rule, path + "[" + std::to_string(i) + "]", problems);
      } else {
        throw std::runtime_error("schema: unsupported keyword " + keyword);
      }
    }
  }

  nlohmann::json root_;
};

}  // namespace nmt::test
