#pragma once
// The corpus metrics, by name. Adding one is a scoring function plus one line in
// metric_registry.cpp; nmt-eval --metrics, validation during training (every metric is
// computed and logged under its name) and train.metric all go through this list.
#include <functional>
#include <string>
#include <vector>

namespace nmt {

struct MetricScore {
  double score = 0;     ///< 0..100, higher is better
  std::string summary;  ///< one line as sacreBLEU prints it, with the signature when there is one
};

struct Metric {
  std::string name;         ///< as nmt-eval --metrics and train.metric spell it
  std::string label;        ///< short name in progress lines ("BLEU")
  std::string description;  ///< one line, for --help
  /// Compares whole strings: validation scores it against references normalised by the
  /// tokenizer (NFKC, spacing), so a perfect translation is not counted as a miss.
  bool compares_normalised_text = false;
  /// Corpus score of line-aligned hypotheses and references (equal lengths).
  std::function<MetricScore(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references)>
      score;
};

/// Every registered metric, in registration order.
const std::vector<Metric>& metrics();
/// Throws nmt::Error listing the registered names if `name` is not one of them.
const Metric& find_metric(const std::string& name);
/// "bleu, chrf, exact_match"
std::string metric_list();

/// Percent of hypotheses identical to their reference.
double exact_match_rate(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

}  // namespace nmt
