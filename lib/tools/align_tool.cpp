// nmt-align's command line (apps/nmt-align.cpp calls run): exports attention matrices (JSON Lines), word alignments and an HTML heatmap.
#include "nmt/tools/tools.h"

#include <fstream>
#include <iostream>
#include <memory>

#include "nmt/base/process_setup.h"
#include "nmt/base/atomic_file.h"
#include "nmt/base/cli.h"
#include "translation_progress.h"
#include "nmt/base/error.h"
#include "nmt/decoding/search_flags.h"
#include "nmt/decoding/translator.h"
#include "nmt/export/align_job.h"
#include "nmt/export/attention_html.h"
#include "nmt/models/inference_flags.h"

namespace nmt::tools::align_tool {

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Export attention (JSON Lines), word alignments and an HTML heatmap for translations or given references",
               "nmt-align"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  std::string input_path, target_path, html_path, output_path, heads = "all", layers;
  nmt::AlignJobOptions job;
  auto& options = job.exporting;
  nmt::TranslateOptions translate;
  translate.search.keep_attention = true;
  const nmt::InferenceFlags model_flags(app, nmt::ModelFlagCount::one);
  app.add_option("-i,--input", input_path, "Read the sources from this file instead of stdin")->check(CLI::ExistingFile);
  app.add_option("--tgt", target_path, "Reference translations to force-decode (as many lines as the sources)")
      ->check(CLI::ExistingFile);
  nmt::add_search_flags(app, translate.search, nmt::SearchOptionUse::align);
  app.add_option("--nbest", job.nbest, "Export the K best hypotheses of each sentence (objects with \"rank\")")
      ->check(nmt::cli::positive())
      ->capture_default_str();
  app.add_option("--layers", layers, "Transformer decoder layers: all, last or a 0-based index (default: all)");
  app.add_option("--heads", heads, "all heads, or only their mean")->check(CLI::IsMember({"all", "mean"}))->capture_default_str();
  app.add_flag("--self-attention", options.self_attention, "Also export encoder and decoder self-attention (Transformer)");
  app.add_flag("--word-level", options.word_level, "Matrices over words (pieces merged) instead of pieces");
  app.add_option("--html", html_path, "Also write a self-contained HTML heatmap page");
  app.add_option("--html-max", job.html_max, "Sentences on the HTML page (the first N)")->capture_default_str();
  app.add_option("-o,--output", output_path, "JSON Lines file (default: stdout); written atomically");
  nmt::tools::TranslationProgress progress(app);
  return nmt::cli::run(app, common, argc, argv, [&] {
    options.all_heads = heads == "all";
    translate.search.nbest = job.nbest;
    if (translate.search.beam < job.nbest) translate.search.beam = job.nbest;
    // Opened before the model loads, so that an input or output that cannot be used stops
    // the run at once. Each block's lines go out as soon as they are done: to stdout, or
    // into a temporary that replaces --output only when everything succeeded.
    std::ifstream sources, targets;
    if (!input_path.empty()) {
      sources.open(input_path, std::ios::binary);
      if (!sources) throw nmt::Error("cannot open " + input_path);
    }
    if (!target_path.empty()) {
      targets.open(target_path, std::ios::binary);
      if (!targets) throw nmt::Error("cannot open " + target_path);
    }
    std::unique_ptr<nmt::AtomicFileWriter> file;
    if (!output_path.empty()) file = std::make_unique<nmt::AtomicFileWriter>(output_path);
    nmt::Translator translator(model_flags.load(), translate);
    const auto& loaded = translator.model();
    const auto& arch = loaded.config.model.arch;
    if (!layers.empty()) {
      nmt::select_layers(layers, loaded.model->attention_layers(), arch);  // validates the request
      options.layers = layers;
    }
    if (options.self_attention && !loaded.model->has_self_attention())
      throw nmt::Error("--self-attention: the " + arch + " model has no self-attention (only the Transformer has)");
    progress.report(translator, "nmt-align");
    const auto write = [&](const std::string& line) {
      if (file) file->write(line);
      else std::cout << line;
    };
    const auto warn = [](long line, const std::string& text) {
      nmt::cli::print_line("nmt-align: warning: line " + std::to_string(line) + ": " + text);
    };
    const auto result = nmt::run_align_job(translator, input_path.empty() ? std::cin : sources,
                                           input_path.empty() ? "stdin" : input_path, target_path.empty() ? nullptr : &targets,
                                           target_path, job, write, warn);
    if (file) file->commit();
    else nmt::cli::check_stdout();
    if (!html_path.empty()) {
      std::string title = "nmt-align: " + model_flags.model_path();
      if (static_cast<size_t>(result.objects) > result.html_sentences.size())
        title += " (the first " + std::to_string(result.html_sentences.size()) + " of " +
                 std::to_string(result.objects) + " objects; see --html-max)";
      nmt::write_file_atomically(html_path, nmt::attention_html(result.html_sentences, title));
    }
    return 0;
  });
}

}  // namespace nmt::tools::align_tool
