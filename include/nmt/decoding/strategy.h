#pragma once
// The search strategies, by name. Adding one is a search function plus one line in
// strategy.cpp; the translator (nmt-translate, nmt-align) and --search list go through it.
#include <functional>
#include <string>
#include <vector>

#include "nmt/decoding/search.h"

namespace nmt {

using SearchResults = std::vector<std::vector<Hypothesis>>;

struct SearchStrategy {
  std::string name;         ///< as --search spells it
  std::string description;  ///< one line, for --help
  /// source [B, S] and its guides -> per sentence in input order, hypotheses best first.
  std::function<SearchResults(Seq2SeqModel&, const torch::Tensor&, const SearchOptions&, const SearchGuides&)> run;
  /// Honours SearchGuides::constraints (the others refuse a line that has some).
  bool takes_constraints = false;
  /// Draws from the distribution: the sampling options apply, and n-best counts draws, not
  /// beam entries (so it is not bounded by the beam).
  bool draws_samples = false;
};

/// Every registered strategy, in registration order.
const std::vector<SearchStrategy>& search_strategies();
/// Throws nmt::Error listing the registered names if `name` is not one of them.
const SearchStrategy& find_search_strategy(const std::string& name);
std::vector<std::string> search_strategy_names();
/// "greedy, beam"
std::string search_strategy_list();
/// options.strategy, or when it is empty greedy for beam 1 and beam otherwise.
const SearchStrategy& strategy_for(const SearchOptions& options);
/// Runs strategy_for(options).
SearchResults search(Seq2SeqModel& model, const torch::Tensor& source, const SearchOptions& options,
                     const SearchGuides& guides = {});

}  // namespace nmt
