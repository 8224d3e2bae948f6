// nmt-align: exports attention matrices (JSON Lines), word alignments and an HTML heatmap.
#include <fstream>
#include <iostream>

#include "nmt/base/atomic_file.h"
#include "nmt/text/batching.h"
#include "nmt/export/attention_export.h"
#include "nmt/export/attention_html.h"
#include "nmt/base/cli.h"
#include "nmt/text/corpus.h"
#include "nmt/base/device.h"
#include "nmt/base/error.h"
#include "nmt/decoding/translator.h"

namespace {

// Raw lines of the --tgt file: bad UTF-8 becomes a per-line warning, not an error.
std::vector<std::string> read_raw_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw nmt::Error("cannot open " + path);
  return nmt::read_lines(in, path, false);
}

std::string blank_or_bad(const std::string& line) {
  if (auto problem = nmt::utf8_problem(line); !problem.empty()) return problem;
  if (nmt::is_blank(line)) return "empty line";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Export attention (JSON Lines), word alignments and an HTML heatmap for translations or given references",
               "nmt-align"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::string model_path, target_path, html_path, output_path, device_name = "cpu", heads = "all", layers;
  nmt::AttentionExportOptions options;
  nmt::TranslateOptions translate;
  translate.search.keep_attention = true;
  app.add_option("--model", model_path, "Checkpoint (DIR/best.pt)")->required()->check(CLI::ExistingFile);
  app.add_option("--tgt", target_path, "Reference translations to force-decode (same line count as stdin)")
      ->check(CLI::ExistingFile);
  app.add_option("--beam", translate.search.beam, "Beam size when translating")->capture_default_str();
  app.add_option("--alpha", translate.search.alpha, "Length penalty when translating")->capture_default_str();
  app.add_option("--layers", layers, "Transformer decoder layers: all, last or a 0-based index (default: all)");
  app.add_option("--heads", heads, "all heads, or only their mean")->check(CLI::IsMember({"all", "mean"}))->capture_default_str();
  app.add_flag("--self-attention", options.self_attention, "Also export encoder and decoder self-attention (Transformer)");
  app.add_flag("--word-level", options.word_level, "Matrices over words (pieces merged) instead of pieces");
  app.add_option("--html", html_path, "Also write a self-contained HTML heatmap page");
  app.add_option("--output", output_path, "JSON Lines file (default: stdout)");
  app.add_option("--device", device_name, "cpu or cuda")->capture_default_str();
  return nmt::cli::run(app, common, argc, argv, [&] {
    options.all_heads = heads == "all";
    const auto device = nmt::parse_device(device_name);
    nmt::Translator translator(nmt::load_model(model_path, device), translate, device);
    auto loaded = translator.model();
    const auto& arch = loaded.config.model.arch;
    if (!layers.empty()) {
      nmt::select_layers(layers, loaded.model->attention_layers(), arch);  // validates the request
      options.layers = layers;
    }
    if (options.self_attention && !loaded.model->has_self_attention())
      throw nmt::Error("--self-attention: the " + arch + " model has no self-attention (only the Transformer has)");
    const auto sources = nmt::read_lines(std::cin, "<stdin>", false);
    std::vector<std::string> targets;
    if (!target_path.empty()) {
      targets = read_raw_lines(target_path);
      if (targets.size() != sources.size())
        throw nmt::Error(target_path + " has " + std::to_string(targets.size()) + " lines but stdin has " +
                         std::to_string(sources.size()) + "; they must be line-aligned");
    }
    const std::string mode = targets.empty() ? "translate" : "force";
    std::vector<nmt::Translation> translations;
    if (targets.empty()) translations = translator.translate(sources);

    std::vector<nlohmann::json> objects;
    for (size_t i = 0; i < sources.size(); ++i) {
      const long line = static_cast<long>(i) + 1;
      std::string problem = blank_or_bad(sources[i]);
      if (problem.empty() && !targets.empty()) {
        if (auto bad = blank_or_bad(targets[i]); !bad.empty()) problem = target_path + ": " + bad;
      }
      if (problem.empty() && targets.empty() && translations[i].hypotheses.empty())
        problem = translations[i].warning.empty() ? "no translation" : translations[i].warning;
      if (!problem.empty()) {
        std::cerr << "nmt-align: warning: line " << line << ": " << problem << std::endl;
        objects.push_back(nmt::skipped_line(line, mode, problem));
        continue;
      }
      nmt::ExportInput input{line, mode, sources[i], {}, nullptr, ""};
      nmt::Hypothesis forced;
      if (targets.empty()) {
        input.source_ids = translations[i].source_ids;
        input.hypothesis = &translations[i].hypotheses.front();
        input.target_text = translations[i].best_text();
      } else {
        input.source_ids = loaded.source_tokenizer.encode(sources[i]);
        const auto target_ids = loaded.target_tokenizer.encode(targets[i]);
        std::vector<const std::vector<int>*> row{&input.source_ids};
        torch::NoGradGuard no_grad;
        forced = nmt::force_decode(*loaded.model, nmt::pad_sequences(row, -1, nmt::SpecialIds::kEos).to(device),
                                   target_ids, true);
        input.hypothesis = &forced;
        input.target_text = loaded.target_tokenizer.decode(target_ids);
      }
      objects.push_back(nmt::export_attention(loaded, input, options));
    }
    std::string jsonl;
    for (const auto& object : objects)
      jsonl += object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (output_path.empty()) std::cout << jsonl << std::flush;
    else nmt::write_file_atomically(output_path, jsonl);
    if (!html_path.empty()) nmt::write_file_atomically(html_path, nmt::attention_html(objects, "nmt-align: " + model_path));
    return 0;
  });
}
