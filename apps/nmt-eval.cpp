// nmt-eval: corpus BLEU and chrF of a hypothesis file against a reference, as sacreBLEU
// computes them by default.
#include <iostream>
#include <sstream>

#include "nmt/base/cli.h"
#include "nmt/text/corpus.h"
#include "nmt/base/error.h"
#include "nmt/eval/metrics.h"

namespace {

std::vector<std::string> split_metrics(const std::string& list) {
  std::vector<std::string> metrics;
  std::stringstream stream(list);
  for (std::string name; std::getline(stream, name, ',');) {
    if (name != "bleu" && name != "chrf") throw nmt::Error("unknown metric \"" + name + "\" (expected bleu, chrf)");
    metrics.push_back(name);
  }
  if (metrics.empty()) throw nmt::Error("--metrics is empty");
  return metrics;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Score translations (stdin) against a reference: sacreBLEU-compatible BLEU and chrF", "nmt-eval"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::string reference_path, metric_list = "bleu,chrf";
  bool score_only = false;
  app.add_option("--ref", reference_path, "Reference translations, one per line")->required()->check(CLI::ExistingFile);
  app.add_option("--metrics", metric_list, "Comma-separated: bleu,chrf")->capture_default_str();
  app.add_flag("--score-only,-b", score_only, "Print only the numbers, one per metric");
  return nmt::cli::run(app, common, argc, argv, [&] {
    const auto metrics = split_metrics(metric_list);
    const auto references = nmt::read_text_lines(reference_path);
    const auto hypotheses = nmt::read_lines(std::cin, "<stdin>", true);
    if (hypotheses.size() != references.size())
      throw nmt::Error("stdin has " + std::to_string(hypotheses.size()) + " lines but " + reference_path + " has " +
                       std::to_string(references.size()));
    for (const auto& metric : metrics) {
      if (metric == "bleu") {
        const auto bleu = nmt::corpus_bleu(hypotheses, references);
        if (score_only) std::printf("%.2f\n", bleu.score);
        else std::cout << bleu.format() << " | " << nmt::bleu_signature() << '\n';
      } else {
        const auto chrf = nmt::corpus_chrf(hypotheses, references);
        if (score_only) std::printf("%.2f\n", chrf.score);
        else std::cout << chrf.format() << " | " << nmt::chrf_signature() << '\n';
      }
      std::cout.flush();
    }
    return 0;
  });
}
