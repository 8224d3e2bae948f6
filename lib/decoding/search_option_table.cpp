#include "nmt/decoding/search_option_table.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

namespace nmt {
namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();
constexpr unsigned kTranslate = static_cast<unsigned>(SearchOptionUse::translate);
constexpr unsigned kAlign = static_cast<unsigned>(SearchOptionUse::align);
constexpr unsigned kServe = static_cast<unsigned>(SearchOptionUse::serve);
constexpr unsigned kRequest = static_cast<unsigned>(SearchOptionUse::request);

template <typename T>
AnySearchField field(T& (*of)(SearchOptions&)) {
  return SearchField<T>{of};
}

std::vector<SearchOptionSpec> make_table() {
  auto beam = field<int>([](SearchOptions& o) -> int& { return o.beam; });
  auto strategy = field<std::string>([](SearchOptions& o) -> std::string& { return o.strategy; });
  auto nbest = field<int>([](SearchOptions& o) -> int& { return o.nbest; });
  auto top_k = field<int>([](SearchOptions& o) -> int& { return o.sampling.top_k; });
  auto top_p = field<double>([](SearchOptions& o) -> double& { return o.sampling.top_p; });
  auto temperature = field<double>([](SearchOptions& o) -> double& { return o.sampling.temperature; });
  auto seed = field<uint64_t>([](SearchOptions& o) -> uint64_t& { return o.sampling.seed; });
  auto alpha = field<double>([](SearchOptions& o) -> double& { return o.alpha; });
  auto coverage = field<double>([](SearchOptions& o) -> double& { return o.coverage; });
  auto ratio = field<double>([](SearchOptions& o) -> double& { return o.max_length_ratio; });
  auto extra = field<int>([](SearchOptions& o) -> int& { return o.max_length_extra; });
  auto min_length = field<int>([](SearchOptions& o) -> int& { return o.min_length; });
  // name, help, field, low, high, low exclusive, uses, sampling only
  return {
      {"beam", "Beam size (1 = greedy)", beam, 0, kNoLimit, true, kTranslate | kAlign | kServe | kRequest},
      // The strategies' names and descriptions come from their registry (search_flags.cpp).
      {"search", "Search strategy, default greedy for --beam 1, else beam:", strategy, 0, 0, false, kTranslate},
      {"nbest", "Hypotheses per sentence (<= beam); --search sample: samples per line", nbest, 0, kNoLimit, true,
       kTranslate | kServe | kRequest},
      {"sampling-topk", "--search sample: draw from the K most probable tokens (0 = all)", top_k, 0, kNoLimit, false,
       kTranslate, true},
      {"sampling-topp", "--search sample: then from the fewest most probable tokens whose probability reaches P (1 = all)",
       top_p, 1e-6, 1.0, false, kTranslate, true},
      {"sampling-temperature", "--search sample: divides the log-probs first (< 1 sharper, > 1 more diverse)",
       temperature, 1e-3, 1e3, false, kTranslate, true},
      {"seed", "--search sample: random seed (the same seed, model and input give the same output, batched or not)",
       seed, 0, 0, false, kTranslate, true},
      {"alpha", "GNMT length penalty ((5+len)/6)^alpha; 0 = none", alpha, 0, 10, false,
       kTranslate | kAlign | kServe | kRequest},
      {"coverage", "GNMT coverage penalty beta (attention models)", coverage, 0, 10, false,
       kTranslate | kAlign | kServe | kRequest},
      // The length limits are the server's alone: its Translator decided its input limit from them.
      {"max-len-ratio", "Max output tokens = ratio * source tokens + extra", ratio, 0, 1000, false,
       kTranslate | kAlign | kServe},
      {"max-len-extra", "See --max-len-ratio", extra, 0, kNoLimit, false, kTranslate | kAlign | kServe},
      {"min-len", "No end of sentence before this many tokens", min_length, 0, kNoLimit, false,
       kTranslate | kAlign | kServe | kRequest},
  };
}

std::string number_text(double x) {
  if (std::isinf(x)) return "inf";
  std::ostringstream out;
  out << x;
  return out.str();
}

bool in_bounds(double x, double low, double high, bool low_exclusive) {
  return (low_exclusive ? x > low : x >= low) && x <= high;
}

// The bounds message of `spec` with its upper bound tightened to `high`.
std::string must_be(const SearchOptionSpec& spec, double high) {
  return "\"" + spec.json_key() + "\" must be " + spec.bounds_text(high);
}

void read_one(const nlohmann::json& value, const SearchOptionSpec& spec, double high, SearchOptions& options) {
  const std::string key = "\"" + spec.json_key() + "\"";
  std::visit(
      [&](const auto& field) {
        using T = std::decay_t<decltype(field.of(options))>;
        if constexpr (std::is_same_v<T, std::string>) {
          if (!value.is_string()) throw SearchOptionError(key + " must be a string");
          field.of(options) = value.get<std::string>();
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0))
            throw SearchOptionError(key + " must be an integer from 0 to 2^64 - 1");
          field.of(options) = value.get<uint64_t>();
        } else if constexpr (std::is_same_v<T, int>) {
          if (!value.is_number_integer()) throw SearchOptionError(key + " must be an integer");
          // An unsigned integer over int64's range would wrap to a negative number.
          const double number = value.is_number_unsigned() ? static_cast<double>(value.get<uint64_t>())
                                                           : static_cast<double>(value.get<int64_t>());
          if (!in_bounds(number, spec.low, std::min(high, double(std::numeric_limits<int>::max())), spec.low_exclusive))
            throw SearchOptionError(must_be(spec, high) + ", got " + value.dump());
          field.of(options) = static_cast<int>(number);
        } else {
          if (!value.is_number()) throw SearchOptionError(key + " must be a number");
          const double number = value.get<double>();
          if (!std::isfinite(number) || !in_bounds(number, spec.low, high, spec.low_exclusive))
            throw SearchOptionError(must_be(spec, high) + ", got " + value.dump());
          field.of(options) = number;
        }
      },
      spec.field);
}

}  // namespace

std::string SearchOptionSpec::json_key() const {
  std::string key = name;
  for (char& c : key)
    if (c == '-') c = '_';
  return key;
}

std::string SearchOptionSpec::bounds_text(double upper) const {
  const bool integral = std::holds_alternative<SearchField<int>>(field);
  // An integer above 0 is one from 1.
  const double shown_low = integral && low_exclusive ? low + 1 : low;
  const bool exclusive = low_exclusive && !integral;
  if (std::isinf(upper)) return (exclusive ? "above " : "at least ") + number_text(shown_low);
  return (exclusive ? "in (" : "in [") + number_text(shown_low) + ", " + number_text(upper) + "]";
}

const std::vector<SearchOptionSpec>& search_option_table() {
  static const std::vector<SearchOptionSpec> table = make_table();
  return table;
}

bool same_search_settings(const SearchOptions& a, const SearchOptions& b) {
  for (const auto& spec : search_option_table()) {
    const bool same = std::visit([&](const auto& field) { return field.get(a) == field.get(b); }, spec.field);
    if (!same) return false;
  }
  return true;
}

std::vector<std::string> search_option_keys(SearchOptionUse use) {
  std::vector<std::string> keys;
  for (const auto& spec : search_option_table())
    if (spec.used_by(use)) keys.push_back(spec.json_key());
  return keys;
}

void read_search_options(const nlohmann::json& object, SearchOptionUse use, SearchOptions& options,
                         const SearchOptionCap& cap) {
  for (const auto& spec : search_option_table()) {
    if (!spec.used_by(use) || !object.contains(spec.json_key())) continue;
    const double high = cap ? std::min(spec.high, cap(spec, options)) : spec.high;
    read_one(object.at(spec.json_key()), spec, high, options);
  }
}

nlohmann::json search_options_json(const SearchOptions& options, SearchOptionUse use) {
  auto object = nlohmann::json::object();
  for (const auto& spec : search_option_table())
    if (spec.used_by(use))
      std::visit([&](const auto& field) { object[spec.json_key()] = field.get(options); }, spec.field);
  return object;
}

}  // namespace nmt
