// nmt-eval's command line (apps/nmt-eval.cpp calls run): corpus scores of a hypothesis file against a reference: any registered metric
// (BLEU and chrF as sacreBLEU computes them by default, exact match).
#include "nmt/tools/tools.h"

#include <iomanip>
#include <iostream>
#include <sstream>

#include "nmt/base/process_setup.h"
#include "nmt/base/cli.h"
#include "nmt/base/error.h"
#include "nmt/eval/metric.h"
#include "nmt/text/corpus.h"

namespace nmt::tools::eval_tool {
namespace {

std::vector<const nmt::Metric*> split_metrics(const std::string& list) {
  std::vector<const nmt::Metric*> chosen;
  std::stringstream stream(list);
  for (std::string name; std::getline(stream, name, ',');) chosen.push_back(&nmt::find_metric(name));
  if (chosen.empty()) throw nmt::Error("--metrics is empty");
  return chosen;
}

std::string describe_metrics() {
  std::string text = "Comma-separated, from:";
  for (const auto& metric : nmt::metrics()) text += "\n  " + metric.name + ": " + metric.description;
  return text;
}

}  // namespace

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Score translations (stdin) against a reference: sacreBLEU-compatible BLEU and chrF, exact match",
               "nmt-eval"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::string reference_path, metric_list = "bleu,chrf";
  bool score_only = false;
  app.add_option("--ref", reference_path, "Reference translations, one per line")->required()->check(CLI::ExistingFile);
  app.add_option("--metrics", metric_list, describe_metrics())
      ->check(CLI::Validator(
          [](std::string& list) {  // an unknown name is a usage error (exit 2), before any reading
            try {
              split_metrics(list);
              return std::string();
            } catch (const nmt::Error& e) {
              return std::string(e.what());
            }
          },
          "METRICS"))
      ->capture_default_str();
  app.add_flag("--score-only,-b", score_only, "Print only the numbers, one per metric");
  return nmt::cli::run(app, common, argc, argv, [&] {
    const auto chosen = split_metrics(metric_list);
    const auto references = nmt::read_text_lines(reference_path);
    const auto hypotheses = nmt::read_lines(std::cin, "stdin", true);
    if (hypotheses.size() != references.size())
      throw nmt::Error("stdin has " + std::to_string(hypotheses.size()) + " lines but " + reference_path + " has " +
                       std::to_string(references.size()));
    for (const auto* metric : chosen) {
      const auto result = metric->score(hypotheses, references);
      if (score_only) std::cout << std::fixed << std::setprecision(2) << result.score << '\n';
      else std::cout << result.summary << '\n';
      std::cout.flush();
    }
    return 0;
  });
}

}  // namespace nmt::tools::eval_tool
