#include "nmt/decoding/search_flags.h"

#include <cmath>
#include <vector>

#include "nmt/base/cli.h"
#include "nmt/decoding/strategy.h"

namespace nmt {
namespace {

CLI::Validator bounds_check(const SearchOptionSpec& spec) {
  if (spec.low_exclusive && spec.low == 0 && std::isinf(spec.high)) return nmt::cli::positive();
  if (std::isinf(spec.high)) return nmt::cli::at_least(spec.low);
  return nmt::cli::in_range(spec.low, spec.high);
}

std::string help_for(const SearchOptionSpec& spec, SearchOptionUse tool) {
  std::string help = spec.help;
  if (std::holds_alternative<SearchField<std::string>>(spec.field))  // the strategy, from its registry
    for (const auto& strategy : search_strategies()) help += "\n  " + strategy.name + ": " + strategy.description;
  if (tool == SearchOptionUse::serve)
    help += spec.used_by(SearchOptionUse::request)
                ? "; the default where a request leaves \"" + spec.json_key() + "\" out"
                : "; the same for every request";
  return help;
}

}  // namespace

void add_search_flags(CLI::App& app, SearchOptions& options, SearchOptionUse tool) {
  std::vector<CLI::Option*> sampling_flags;
  for (const auto& spec : search_option_table()) {
    if (!spec.used_by(tool)) continue;
    auto* flag = std::visit(
        [&](const auto& field) { return app.add_option("--" + spec.name, field.of(options), help_for(spec, tool)); },
        spec.field);
    if (std::holds_alternative<SearchField<std::string>>(spec.field)) {
      flag->check(CLI::IsMember(search_strategy_names()));
    } else {
      if (!std::holds_alternative<SearchField<uint64_t>>(spec.field)) flag->check(bounds_check(spec));
      flag->capture_default_str();
    }
    if (spec.sampling_only) sampling_flags.push_back(flag);
  }
  if (sampling_flags.empty()) return;
  app.callback([&options, sampling_flags] {
    if (strategy_for(options).draws_samples) return;
    for (const auto* flag : sampling_flags)
      if (flag->count() > 0) throw CLI::ValidationError(flag->get_name(), "applies to --search sample only");
  });
}

void add_shortlist_flag(CLI::App& app, std::string& path) {
  app.add_option("--shortlist", path,
                 "Vocabulary shortlist (nmt-shortlist makes one from the training corpus): each line chooses only among the "
                 "target pieces its source pieces may translate to, plus the most frequent ones; faster where the "
                 "output layer costs much (large vocabularies), and may change a translation")
      ->check(CLI::ExistingFile);
}

}  // namespace nmt
