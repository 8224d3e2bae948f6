// The search options described once: each description reaches its field through a tool's
// flag and through the server's JSON alike, with the same bounds, and the batching's
// equality sees every described field.
#include "support/catch.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "nmt/decoding/search_flags.h"
#include "nmt/decoding/search_option_table.h"

using nmt::SearchOptions;
using nmt::SearchOptionSpec;
using nmt::SearchOptionUse;

namespace {

// A value of `spec` other than the default's, inside its bounds, as a flag's text and as JSON.
nlohmann::json other_value(const SearchOptionSpec& spec) {
  const SearchOptions defaults;
  return std::visit(
      [&](const auto& field) -> nlohmann::json {
        using T = std::decay_t<decltype(field.get(defaults))>;
        if constexpr (std::is_same_v<T, std::string>) {
          return "sample";
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          return field.get(defaults) + 7;
        } else if constexpr (std::is_same_v<T, int>) {
          return field.get(defaults) + 1;
        } else {
          const double x = field.get(defaults);
          return x + 0.5 <= spec.high ? x + 0.5 : x / 2;
        }
      },
      spec.field);
}

std::string as_flag_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// The field's value in `options`, as JSON (so values of every type compare alike).
nlohmann::json value_in(const SearchOptions& options, const SearchOptionSpec& spec) {
  return std::visit([&](const auto& field) { return nlohmann::json(field.get(options)); }, spec.field);
}

std::set<std::string> flags_of(SearchOptionUse tool) {
  CLI::App app;
  SearchOptions options;
  nmt::add_search_flags(app, options, tool);
  std::set<std::string> names;
  for (const auto* option : app.get_options())
    if (option->get_name() != "--help") names.insert(option->get_name());
  return names;
}

}  // namespace

TEST_CASE("each described option sets its own field, by flag and by JSON", "[search_option_table]") {
  for (const auto& spec : nmt::search_option_table()) {
    INFO(spec.name);
    const auto value = other_value(spec);
    const SearchOptions defaults;
    REQUIRE(value_in(defaults, spec) != value);

    SearchOptions by_flag;
    CLI::App app;
    nmt::add_search_flags(app, by_flag, SearchOptionUse::translate);
    std::vector<std::string> args = {"--" + spec.name, as_flag_text(value)};
    if (spec.sampling_only && spec.name != "search") args.insert(args.end(), {"--search", "sample"});
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    app.parse(args);
    CHECK(value_in(by_flag, spec) == value);

    SearchOptions by_json;
    nmt::read_search_options(nlohmann::json{{spec.json_key(), value}}, SearchOptionUse::translate, by_json);
    CHECK(value_in(by_json, spec) == value);
    // Nothing else moved: the two differ from the defaults in this field alone.
    for (const auto& other : nmt::search_option_table())
      if (other.name != spec.name) CHECK(value_in(by_json, other) == value_in(defaults, other));
    CHECK_FALSE(nmt::same_search_settings(by_json, defaults));
    by_json.strategy = by_flag.strategy;  // sampling's flags came with --search sample
    CHECK(nmt::same_search_settings(by_json, by_flag));
  }
}

TEST_CASE("the bounds are one: the flag's usage check and the JSON's error agree", "[search_option_table]") {
  for (const auto& spec : nmt::search_option_table()) {
    if (std::holds_alternative<nmt::SearchField<std::string>>(spec.field) ||
        std::holds_alternative<nmt::SearchField<uint64_t>>(spec.field))
      continue;
    INFO(spec.name);
    const bool integral = std::holds_alternative<nmt::SearchField<int>>(spec.field);
    const nlohmann::json below = integral ? nlohmann::json(static_cast<int>(spec.low) - 1) : nlohmann::json(spec.low - 1);
    const nlohmann::json above = integral ? nlohmann::json(static_cast<int>(spec.high) + 1) : nlohmann::json(spec.high + 1);
    SearchOptions options;
    CLI::App app;
    nmt::add_search_flags(app, options, SearchOptionUse::translate);
    std::vector<std::string> args = {"--" + spec.name, below.dump()};
    std::reverse(args.begin(), args.end());
    CHECK_THROWS_AS(app.parse(args), CLI::ValidationError);
    CHECK_THROWS_WITH(nmt::read_search_options(nlohmann::json{{spec.json_key(), below}}, SearchOptionUse::translate, options),
                      HasSubstring("\"" + spec.json_key() + "\" must be " + spec.bounds_text()));
    if (!std::isinf(spec.high)) {
      CHECK_THROWS_WITH(nmt::read_search_options(nlohmann::json{{spec.json_key(), above}},
                                                 SearchOptionUse::translate, options),
                        HasSubstring(spec.bounds_text()));
    }
  }
  SearchOptions options;
  CHECK_THROWS_WITH(nmt::read_search_options(nlohmann::json{{"beam", "3"}}, SearchOptionUse::request, options),
                    HasSubstring("\"beam\" must be an integer"));
  CHECK_THROWS_WITH(nmt::read_search_options(nlohmann::json{{"beam", 0}}, SearchOptionUse::request, options),
                    HasSubstring("\"beam\" must be at least 1, got 0"));
  CHECK_THROWS_WITH(nmt::read_search_options(nlohmann::json{{"alpha", 11}}, SearchOptionUse::request, options),
                    HasSubstring("\"alpha\" must be in [0, 10], got 11"));
  // A caller's cap tightens the upper bound, and the message says the tightened one.
  const nmt::SearchOptionCap cap = [](const SearchOptionSpec& spec, const SearchOptions&) {
    return spec.name == "beam" ? 32.0 : spec.high;
  };
  CHECK_THROWS_WITH(nmt::read_search_options(nlohmann::json{{"beam", 18446744073709551615ull}}, SearchOptionUse::request,
                                             options, cap),
                    HasSubstring("\"beam\" must be in [1, 32], got 18446744073709551615"));
  CHECK(options.beam == SearchOptions{}.beam);  // a refused value is not kept
}

TEST_CASE("each tool and the server's requests take the options the table gives them", "[search_option_table]") {
  CHECK(flags_of(SearchOptionUse::translate) ==
        std::set<std::string>{"--beam", "--search", "--nbest", "--sampling-topk", "--sampling-topp",
                              "--sampling-temperature", "--seed", "--alpha", "--coverage", "--max-len-ratio",
                              "--max-len-extra", "--min-len"});
  // nmt-align exports its own --nbest (the hypotheses it writes) and does not sample.
  CHECK(flags_of(SearchOptionUse::align) ==
        std::set<std::string>{"--beam", "--alpha", "--coverage", "--max-len-ratio", "--max-len-extra", "--min-len"});
  CHECK(flags_of(SearchOptionUse::serve) == std::set<std::string>{"--beam", "--nbest", "--alpha", "--coverage",
                                                                  "--max-len-ratio", "--max-len-extra", "--min-len"});
  CHECK(nmt::search_option_keys(SearchOptionUse::request) ==
        std::vector<std::string>{"beam", "nbest", "alpha", "coverage", "min_len"});
  // A request cannot reach an option the table keeps from it.
  SearchOptions options;
  nmt::read_search_options(nlohmann::json{{"max_len_ratio", 1.0}, {"seed", 3}}, SearchOptionUse::request, options);
  CHECK(nmt::same_search_settings(options, SearchOptions{}));
  CHECK(nmt::search_options_json(SearchOptions{}, SearchOptionUse::request) ==
        nlohmann::json{{"beam", 5}, {"nbest", 1}, {"alpha", 0.6}, {"coverage", 0.0}, {"min_len", 0}});
}

TEST_CASE("sampling's options are refused without --search sample", "[search_option_table]") {
  SearchOptions options;
  CLI::App app;
  nmt::add_search_flags(app, options, SearchOptionUse::translate);
  std::vector<std::string> args = {"--sampling-topk", "5"};
  std::reverse(args.begin(), args.end());
  CHECK_THROWS_WITH(app.parse(args), HasSubstring("applies to --search sample only"));
}
