// The metric registry: names, refusals, and that each entry is the scorer it names.
#include "support/catch.h"

#include "nmt/base/error.h"
#include "nmt/eval/metric.h"
#include "nmt/eval/metrics.h"

using namespace nmt;

TEST_CASE("the registry lists bleu, chrf and exact_match", "[metrics][registry]") {
  CHECK(metric_list() == "bleu, chrf, exact_match");
  CHECK_THROWS_WITH(find_metric("ter"), HasSubstring("unknown metric \"ter\" (expected bleu, chrf, exact_match)"));
}

TEST_CASE("registered metrics give the scorers' results and sacreBLEU lines", "[metrics][registry]") {
  const std::vector<std::string> hyps = {"the cat sat on the mat .", "a dog runs in the park"};
  const std::vector<std::string> refs = {"the cat sat on the mat .", "a dog is running in the park"};
  const auto bleu = find_metric("bleu").score(hyps, refs);
  CHECK(bleu.score == corpus_bleu(hyps, refs).score);
  CHECK(bleu.summary == corpus_bleu(hyps, refs).format() + " | " + bleu_signature());
  const auto chrf = find_metric("chrf").score(hyps, refs);
  CHECK(chrf.score == corpus_chrf(hyps, refs).score);
  CHECK(chrf.summary.rfind("chrF2 = ", 0) == 0);
  const auto exact = find_metric("exact_match").score(hyps, refs);
  CHECK(exact.score == 50.0);
  CHECK(exact.summary == "exact match = 50.00% of 2 lines");
  CHECK(exact_match_rate({}, {}) == 0.0);
  CHECK_THROWS(exact_match_rate({"a"}, {}));
}
