#include "responses.h"

namespace nmt::serve {
namespace {

// `line`: 1-based within the request (the worker saw the whole cross-request batch).
nlohmann::json hypothesis_json(const HypothesisResult& h, bool attention, long line) {
  nlohmann::json object = {{"text", h.text}, {"score", h.score}, {"log_prob", h.log_prob}, {"tokens", h.tokens}};
  if (attention) {
    object["attention"] = h.attention;
    if (h.attention.is_object()) object["attention"]["line"] = line;
  }
  return object;
}

// A blank line has no hypothesis: it still answers with an empty translation.
nlohmann::json empty_hypothesis(bool attention) {
  nlohmann::json object = {{"text", ""}, {"score", 0.0}, {"log_prob", 0.0}, {"tokens", nlohmann::json::array()}};
  if (attention) object["attention"] = nullptr;
  return object;
}

}  // namespace

nlohmann::json translate_response(const std::vector<LineResult>& results, const JobOptions& options) {
  nlohmann::json translations = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& line = results[i];
    const long number = static_cast<long>(i) + 1;
    nlohmann::json entry = line.hypotheses.empty() ? empty_hypothesis(options.attention)
                                                   : hypothesis_json(line.hypotheses.front(), options.attention, number);
    if (!line.warning.empty()) entry["warning"] = line.warning;
    if (options.search.nbest > 1) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& h : line.hypotheses) list.push_back(hypothesis_json(h, options.attention, number));
      entry["nbest"] = list;
    }
    translations.push_back(std::move(entry));
  }
  return {{"translations", translations}};
}

nlohmann::json opennmt_response(const std::vector<std::string>& sources, const std::vector<LineResult>& results,
                                int nbest) {
  nlohmann::json lists = nlohmann::json::array();
  for (int k = 0; k < nbest; ++k) {
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < sources.size(); ++i) {
      const auto& hypotheses = results[i].hypotheses;
      // A sentence may end with fewer distinct hypotheses than asked; OpenNMT-py always
      // fills n_best slots, so the last one found is repeated.
      const HypothesisResult* h = hypotheses.empty() ? nullptr : &hypotheses[std::min<size_t>(k, hypotheses.size() - 1)];
      list.push_back({{"src", sources[i]},
                      {"tgt", h ? h->text : ""},
                      {"n_best", nbest},
                      {"pred_score", h ? h->score : 0.0}});
    }
    lists.push_back(std::move(list));
  }
  return lists;
}

nlohmann::json error_body(const std::string& message) { return {{"error", message}, {"status", "error"}}; }

}  // namespace nmt::serve
