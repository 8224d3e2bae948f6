#include <cstdio>
#include <stdexcept>

#include "nmt/base/error.h"
#include "nmt/base/named_registry.h"
#include "nmt/eval/metric.h"
#include "nmt/eval/metrics.h"

namespace nmt {
namespace {

MetricScore bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  const auto result = corpus_bleu(hypotheses, references);
  return {result.score, result.format() + " | " + bleu_signature()};
}

MetricScore chrf(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  const auto result = corpus_chrf(hypotheses, references);
  return {result.score, result.format() + " | " + chrf_signature()};
}

MetricScore exact_match(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  const double rate = exact_match_rate(hypotheses, references);
  char summary[96];
  std::snprintf(summary, sizeof summary, "exact match = %.2f%% of %zu lines", rate, hypotheses.size());
  return {rate, summary};
}

}  // namespace

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> registered = {
      {"bleu", "BLEU", "corpus BLEU as sacreBLEU 2.x computes it (13a, exp smoothing)", false, bleu},
      {"chrf", "chrF", "chrF2 as sacreBLEU 2.x computes it (character order 6)", false, chrf},
      {"exact_match", "exact", "percent of lines identical to the reference", true, exact_match},
  };
  return registered;
}

const Metric& find_metric(const std::string& name) {
  return find_registered(metrics(), name, "unknown metric \"" + name + "\"");
}

std::string metric_list() { return registered_name_list(metrics()); }

double exact_match_rate(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  if (hypotheses.size() != references.size())
    throw Error("exact match: " + std::to_string(hypotheses.size()) + " hypotheses but " +
                std::to_string(references.size()) + " references");
  if (hypotheses.empty()) return 0.0;
  size_t exact = 0;
  for (size_t i = 0; i < hypotheses.size(); ++i) exact += hypotheses[i] == references[i];
  return 100.0 * static_cast<double>(exact) / static_cast<double>(hypotheses.size());
}

}  // namespace nmt
