#pragma once
// Every search setting a user can choose, described once: its name, help, bounds, the
// SearchOptions field it sets and which tools and which API take it. Read by every tool's
// flags (search_flags.h: nmt-translate, nmt-align, nmt-serve), by nmt-serve's request
// parser (the JSON keys it knows, their checks) and by the server's batching (two jobs
// share a batch when every described field is equal). A new option is its line in
// search_option_table.cpp, its field in SearchOptions and the code that uses it.
// Free of LibTorch and CLI11 (the server's request checks and their fuzz harness read it).
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "nmt/base/error.h"
#include "nmt/decoding/search_options.h"

namespace nmt {

/// Where an option is offered (bits of SearchOptionSpec::uses).
enum class SearchOptionUse : unsigned {
  translate = 1u << 0,  ///< nmt-translate's flags
  align = 1u << 1,      ///< nmt-align's flags (when it translates)
  serve = 1u << 2,      ///< nmt-serve's flags: the defaults of its requests, or its fixed settings
  request = 1u << 3,    ///< a key of nmt-serve's POST /v1/translate
};

/// One field of SearchOptions, reachable from a mutable or a const SearchOptions. One
/// accessor serves both: `get` only reads through it (the const_cast never writes).
template <typename T>
struct SearchField {
  T& (*of)(SearchOptions&);
  const T& get(const SearchOptions& options) const { return of(const_cast<SearchOptions&>(options)); }
};
using AnySearchField =
    std::variant<SearchField<int>, SearchField<double>, SearchField<uint64_t>, SearchField<std::string>>;

struct SearchOptionSpec {
  std::string name;  ///< the flag is --name; the JSON key is the name with '_' for '-'
  std::string help;
  AnySearchField field;
  /// Inclusive bounds of a number (not of a seed or a text); low_exclusive: above `low`.
  double low = 0, high = 0;
  bool low_exclusive = false;
  unsigned uses = 0;             ///< SearchOptionUse bits
  bool sampling_only = false;    ///< means something to the "sample" strategy only

  bool used_by(SearchOptionUse use) const { return (uses & static_cast<unsigned>(use)) != 0; }
  std::string json_key() const;
  /// "in [1, 32]", "at least 0": the bounds as an error message writes them, the upper one
  /// `upper` where a caller tightened it (SearchOptionCap).
  std::string bounds_text(double upper) const;
  std::string bounds_text() const { return bounds_text(high); }
};

/// The table, in the order --help lists the flags.
const std::vector<SearchOptionSpec>& search_option_table();

/// True when every described field of `a` equals `b`'s: the searches they ask for are one.
bool same_search_settings(const SearchOptions& a, const SearchOptions& b);

/// The JSON keys of the options `use` takes.
std::vector<std::string> search_option_keys(SearchOptionUse use);

/// A bad value of a described option: names the key, what it must be, and what it got.
class SearchOptionError : public Error {
 public:
  using Error::Error;
};

/// A caller's tighter upper bound of one option, given what was read before it in table
/// order (nmt-serve: "beam" at most its request limit, "nbest" at most the request's beam).
using SearchOptionCap = std::function<double(const SearchOptionSpec& spec, const SearchOptions& read_so_far)>;

/// Sets, in `options`, each option `use` takes that `object` has (a JSON object), checked
/// against its type and its bounds (the upper one tightened by `cap` where given); the
/// others keep their values. Throws SearchOptionError naming the key ("\"beam\" must be
/// an integer", "\"alpha\" must be in [0, 10], got 11"). Strings are checked where they are
/// used (a strategy's name by SearchOptions::validate).
void read_search_options(const nlohmann::json& object, SearchOptionUse use, SearchOptions& options,
                         const SearchOptionCap& cap = {});

/// The options `use` takes, as a JSON object of their values in `options` (what a request
/// leaving them out gets).
nlohmann::json search_options_json(const SearchOptions& options, SearchOptionUse use);

}  // namespace nmt
