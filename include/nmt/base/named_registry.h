#pragma once
// What the registries share (model families, search strategies, metrics, config sections): a
// list of entries, each with a `name`, found by it and listed in registration order; an
// unknown name is an error that lists the known ones.
#include <algorithm>
#include <string>
#include <vector>

#include "nmt/base/error.h"

namespace nmt {

/// The entries' names in registration order.
template <class Entry>
std::vector<std::string> registered_names(const std::vector<Entry>& entries) {
  std::vector<std::string> names;
  for (const auto& entry : entries) names.push_back(entry.name);
  return names;
}

/// "a, b, c": for --help and error messages.
template <class Entry>
std::string registered_name_list(const std::vector<Entry>& entries) {
  std::string list;
  for (const auto& entry : entries) list += (list.empty() ? "" : ", ") + entry.name;
  return list;
}

/// The entry called `name`, or null.
template <class Entry>
const Entry* registered_entry(const std::vector<Entry>& entries, const std::string& name) {
  for (const auto& entry : entries)
    if (entry.name == name) return &entry;
  return nullptr;
}

/// The entry called `name`; nmt::Error "`unknown` (expected a, b, c)" without one.
template <class Entry>
const Entry& find_registered(const std::vector<Entry>& entries, const std::string& name, const std::string& unknown) {
  if (const auto* entry = registered_entry(entries, name)) return *entry;
  throw Error(unknown + " (expected " + registered_name_list(entries) + ")");
}

/// Takes the entry called `name` out again (a registration that ends with its scope).
template <class Entry>
void remove_registered(std::vector<Entry>& entries, const std::string& name) {
  entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const Entry& entry) { return entry.name == name; }),
                entries.end());
}

}  // namespace nmt
