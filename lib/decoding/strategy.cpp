#include "nmt/decoding/strategy.h"

#include "nmt/base/error.h"

namespace nmt {
namespace {

SearchResults run_greedy(Seq2SeqModel& model, const torch::Tensor& source, const SearchOptions& options) {
  if (options.nbest > 1) throw Error("greedy search returns one hypothesis per sentence: nbest must be 1");
  SearchResults results;
  for (auto& hypothesis : greedy_search(model, source, options)) results.push_back({std::move(hypothesis)});
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
  for (const auto& strategy : search_strategies())
    if (strategy.name == name) return strategy;
  throw Error("unknown search strategy \"" + name + "\" (expected " + search_strategy_list() + ")");
}

std::vector<std::string> search_strategy_names() {
  std::vector<std::string> names;
  for (const auto& strategy : search_strategies()) names.push_back(strategy.name);
  return names;
}

std::string search_strategy_list() {
  std::string list;
  for (const auto& name : search_strategy_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

const SearchStrategy& strategy_for(const SearchOptions& options) {
  // Beam 1 is greedy search by default: the same argmax path, without beam bookkeeping.
  if (options.strategy.empty()) return find_search_strategy(options.beam == 1 ? "greedy" : "beam");
  return find_search_strategy(options.strategy);
}

SearchResults search(Seq2SeqModel& model, const torch::Tensor& source, const SearchOptions& options) {
  return strategy_for(options).run(model, source, options);
}

}  // namespace nmt
