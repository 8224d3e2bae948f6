#include "nmt/decoding/strategy.h"

#include "nmt/base/error.h"
#include "nmt/base/named_registry.h"

namespace nmt {
namespace {

SearchResults run_greedy(Seq2SeqModel& model, const torch::Tensor& source, const SearchOptions& options,
                         const SearchGuides& guides) {
  if (options.nbest > 1) throw Error("greedy search returns one hypothesis per sentence: nbest must be 1");
  SearchResults results;
  for (auto& hypothesis : greedy_search(model, source, options, guides)) results.push_back({std::move(hypothesis)});
  return results;
}

}  // namespace

const std::vector<SearchStrategy>& search_strategies() {
  static const std::vector<SearchStrategy> registered = {
      {"greedy", "argmax at every step (the default for --beam 1)", run_greedy},
      {"beam", "batched beam search with GNMT length and coverage penalties", beam_search, /*takes_constraints=*/true},
      {"sample", "random sampling (--sampling-topk, --sampling-topp, --sampling-temperature, --seed); --nbest N draws N samples per line",
       sampling_search, /*takes_constraints=*/false, /*draws_samples=*/true},
  };
  return registered;
}

const SearchStrategy& find_search_strategy(const std::string& name) {
  return find_registered(search_strategies(), name, "unknown search strategy \"" + name + "\"");
}

std::vector<std::string> search_strategy_names() { return registered_names(search_strategies()); }

std::string search_strategy_list() { return registered_name_list(search_strategies()); }

const SearchStrategy& strategy_for(const SearchOptions& options) {
  // Beam 1 is greedy search by default: the same argmax path, without beam bookkeeping.
  if (options.strategy.empty()) return find_search_strategy(options.beam == 1 ? "greedy" : "beam");
  return find_search_strategy(options.strategy);
}

SearchResults search(Seq2SeqModel& model, const torch::Tensor& source, const SearchOptions& options,
                     const SearchGuides& guides) {
  return strategy_for(options).run(model, source, options, guides);
}

}  // namespace nmt
