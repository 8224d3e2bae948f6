// nmt-translate's command line (apps/nmt-translate.cpp calls run): translates raw text from stdin with a trained checkpoint.
#include "nmt/tools/tools.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "nmt/base/process_setup.h"
#include "nmt/base/atomic_file.h"
#include "nmt/base/cli.h"
#include "translation_progress.h"
#include "nmt/text/corpus.h"
#include "nmt/text/encoding_check.h"
#include "nmt/text/line_reader.h"
#include "nmt/base/error.h"
#include "nmt/decoding/input_familiarity.h"
#include "nmt/decoding/search_flags.h"
#include "nmt/eval/metric.h"
#include "nmt/decoding/translator.h"
#include "nmt/models/inference_flags.h"

namespace nmt::tools::translate_tool {
namespace {

struct OutputOptions {
  std::string format = "text";
  bool quiet = false;
  std::string reference_path;
};

nlohmann::json to_json(const nmt::Translation& t, long line, const nmt::Tokenizer& target) {
  nlohmann::json hypotheses = nlohmann::json::array();
  for (size_t i = 0; i < t.hypotheses.size(); ++i) {
    const auto& h = t.hypotheses[i];
    std::vector<std::string> pieces;
    for (int id : h.tokens) pieces.push_back(target.piece(id));
    if (h.finished) pieces.push_back("</s>");
    hypotheses.push_back({{"text", t.texts[i]},
                          {"score", h.score},
                          {"log_prob", h.log_prob},
                          {"token_log_probs", h.token_log_probs},
                          {"tokens", pieces},
                          {"finished", h.finished}});
  }
  nlohmann::json object = {{"line", line}, {"hypotheses", hypotheses}};
  if (!t.warning.empty()) object["warning"] = t.warning;
  if (t.truncated) object["truncated"] = true;
  return object;
}

// Writes one input line's result: the best text, n-best lines in Moses' format
// "ID ||| text ||| features ||| total" (ID counted from 0; the one feature is the raw
// log-probability, the total the penalised score that ranks them) or one JSON object.
void write_result(const nmt::Translation& t, long line, const OutputOptions& out, int nbest,
                  const nmt::Tokenizer& target, std::ostream& to) {
  if (out.format == "jsonl") {
    to << to_json(t, line, target).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  } else if (nbest > 1) {
    for (size_t i = 0; i < t.hypotheses.size(); ++i)
      to << line - 1 << " ||| " << t.texts[i] << " ||| LogProb= " << t.hypotheses[i].log_prob << " ||| "
                << t.hypotheses[i].score << '\n';
    if (t.hypotheses.empty()) to << line - 1 << " |||  ||| LogProb= 0 ||| 0\n";
  } else {
    to << t.best_text() << '\n';
  }
}

void report_scores(const std::vector<std::string>& hypotheses, const std::string& reference_path) {
  const auto references = nmt::read_text_lines(reference_path);
  if (references.size() != hypotheses.size())
    throw nmt::Error(reference_path + " has " + std::to_string(references.size()) + " lines but the input had " +
                     std::to_string(hypotheses.size()));
  for (const auto* name : {"bleu", "chrf"})
    nmt::cli::print_line(nmt::find_metric(name).score(hypotheses, references).summary);
}

// A file read in step with stdin, one line per input line (--prefix, --constraints).
class LineAlignedFile {
 public:
  LineAlignedFile(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
    if (path_.empty()) return;
    in_.open(path_, std::ios::binary);
    if (!in_) throw nmt::Error("cannot open " + what_ + " file " + path_);
  }
  /// The line for input line `line_number` ("" without a file); nmt::Error when the file
  /// ended. A line over LineReader::kDefaultMaxBytes: "", and `skip_reason` says why the
  /// input line is not translated.
  std::string next(long line_number, std::string& skip_reason) {
    std::string line;
    if (in_.is_open() && !lines_.next(line))
      throw nmt::Error(path_ + ": no " + what_ + " for input line " + std::to_string(line_number) +
                       " (one line per input line; an empty line for none)");
    if (lines_.dropped() > 0) {
      skip_reason = what_ + " " + path_ + ":" + std::to_string(lines_.number()) + " has " + nmt::cut_warning(lines_) +
                    "; line not translated";
      line.clear();
    }
    return line;
  }
  /// After the input: a warning when the file has lines left.
  void warn_if_longer(long lines) {
    if (std::string extra; in_.is_open() && lines_.next(extra))
      nmt::cli::print_line("nmt-translate: warning: " + path_ + " has more lines than the input (" + std::to_string(lines) +
                           ")");
  }

 private:
  std::string path_, what_;
  std::ifstream in_;
  nmt::LineReader lines_{in_, path_, nmt::LineReader::kDefaultMaxBytes, nmt::LineReader::Overlong::cut};
};

}  // namespace

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Translate text from stdin (one sentence per line) with a trained model", "nmt-translate"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  nmt::TranslateOptions options;
  auto& search = options.search;
  OutputOptions out;
  bool stream = false;
  const nmt::InferenceFlags model_flags(app, nmt::ModelFlagCount::ensemble);
  nmt::add_search_flags(app, search, nmt::SearchOptionUse::translate);
  std::string shortlist_path;
  nmt::add_shortlist_flag(app, shortlist_path);
  auto* size = app.add_option("--batch-size", options.batch_size, "Sentences per batch (1 = stream line by line)");
  app.add_option("--batch-tokens", options.batch_tokens, "Source tokens per batch")->capture_default_str()->excludes(size);
  app.add_option("--max-input-tokens", options.max_input_tokens, "Longer inputs are truncated (with a warning)")
      ->capture_default_str();
  app.add_option("--format", out.format, "text or jsonl")->check(CLI::IsMember({"text", "jsonl"}))->capture_default_str();
  app.add_option("--ref", out.reference_path, "Reference file: print BLEU and chrF of the output on stderr")
      ->check(CLI::ExistingFile);
  std::string prefix_path;
  app.add_option("--prefix", prefix_path,
                 "File of target prefixes, one per input line (empty line: none): every hypothesis starts with its "
                 "line's prefix, then the search goes on freely; the prefix's log-probs count in the score")
      ->check(CLI::ExistingFile);
  std::string constraints_path;
  app.add_option("--constraints", constraints_path,
                 "File of target phrases, one line per input line, tab-separated (empty line: none): every output "
                 "contains each of its line's phrases (lexically constrained beam search; a line where the length "
                 "limit leaves no room for them gets a warning)")
      ->check(CLI::ExistingFile);
  std::string input_path, output_path;
  app.add_option("-i,--input", input_path, "Read the text from this file instead of stdin")->check(CLI::ExistingFile);
  app.add_option("-o,--output", output_path,
                 "Write the translations to this file instead of stdout (whole or not at all: written beside it, "
                 "renamed over it at the end)");
  app.add_flag("--stream", stream, "Translate and flush each line as it arrives (default when stdin is a terminal)");
  app.add_flag("--quiet", out.quiet, "No summary on stderr");
  nmt::tools::TranslationProgress progress(app);
  return nmt::cli::run(app, common, argc, argv, [&] {
    options.validate();
    // Opened before the model loads, so that an output that cannot be written stops the
    // run at once; written beside the file and renamed over it at the end.
    std::optional<nmt::AtomicFileWriter> output;
    if (!output_path.empty()) output.emplace(output_path);
    const auto model = model_flags.load();
    if (!shortlist_path.empty()) {
      options.shortlist = nmt::read_shortlist(shortlist_path, model->loaded());
      if (model_flags.verbose())
        nmt::cli::print_line("nmt-translate: shortlist " + shortlist_path + ": " + describe(*options.shortlist));
    }
    nmt::Translator translator(model, options);
    const auto& target = translator.model().target_tokenizer;
    nmt::InputFamiliarity familiarity(translator.model());
    stream = stream || options.batch_size == 1 || (input_path.empty() && isatty(STDIN_FILENO));
    // In batch mode, read a block of lines, translate it sorted by length, write it in order.
    const size_t block = stream ? 1 : 4000;
    std::vector<std::string> lines, prefixes, best;
    std::vector<std::vector<std::string>> constraints;
    LineAlignedFile prefix_file(prefix_path, "prefix"), constraint_file(constraints_path, "constraints");
    long line_number = 0, warnings = 0, target_tokens = 0;
    const auto start = std::chrono::steady_clock::now();
    // Progress on long input (a file, a pipe), not line by line nor when asked to be quiet.
    if (!stream && !out.quiet) progress.report(translator, "nmt-translate");
    std::ostringstream written;
    auto flush_block = [&] {
      const auto results = translator.translate(lines, prefixes, constraints, line_number);
      for (const auto& t : results) {
        ++line_number;
        if (!t.warning.empty()) {
          ++warnings;
          nmt::cli::print_line("nmt-translate: warning: line " + std::to_string(line_number) + ": " + t.warning);
        }
        if (!t.hypotheses.empty()) target_tokens += static_cast<long>(t.hypotheses.front().tokens.size());
        write_result(t, line_number, out, search.nbest, target, written);
        if (!out.reference_path.empty()) best.push_back(t.best_text());
        familiarity.count(t.source_ids);
      }
      if (const auto unlike = familiarity.warning_once(); !unlike.empty()) {
        ++warnings;
        nmt::cli::print_line("nmt-translate: warning: " + unlike);
      }
      if (output) {
        output->write(written.str());
      } else {
        std::cout << written.str();
        nmt::cli::check_stdout();  // a full disk stops the run here, not after all the input
      }
      written.str("");
      lines.clear();
      prefixes.clear();
      constraints.clear();
    };
    // Lines are cut where the model stops reading, so memory stays bounded whatever their length.
    std::ifstream input_file;
    if (!input_path.empty()) {
      input_file.open(input_path, std::ios::binary);
      if (!input_file) throw nmt::Error("cannot open input file " + input_path);
    }
    nmt::LineReader input(input_path.empty() ? std::cin : input_file, input_path.empty() ? "stdin" : input_path,
                          translator.input_byte_limit(), nmt::LineReader::Overlong::cut);
    nmt::EncodingCheck encoding(input.name());
    for (std::string line; input.next(line);) {
      encoding.line(line);
      std::string cut, skip_reason;
      if (input.dropped() > 0)
        cut = nmt::cut_warning(input) + " (all the model reads: " + std::to_string(translator.input_token_limit()) +
              " tokens)";
      prefixes.push_back(prefix_file.next(input.number(), skip_reason));
      if (!constraints_path.empty()) constraints.push_back(nmt::split_tabs(constraint_file.next(input.number(), skip_reason)));
      if (!skip_reason.empty()) line.clear();  // its output line stays empty
      for (const auto* warning : {&cut, &skip_reason}) {
        if (warning->empty()) continue;
        ++warnings;
        nmt::cli::print_line("nmt-translate: warning: line " + std::to_string(input.number()) + ": " + *warning);
      }
      lines.push_back(std::move(line));
      if (lines.size() >= block) flush_block();
    }
    encoding.finish();
    if (!lines.empty()) flush_block();
    prefix_file.warn_if_longer(line_number);
    constraint_file.warn_if_longer(line_number);
    if (output) output->commit();
    std::cout.flush();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!out.quiet) {
      char summary[256];
      std::snprintf(summary, sizeof summary,
                    "translated %ld lines (%ld warnings) in %.2f s: %.1f sentences/s, %.0f target tokens/s",
                    line_number, warnings, seconds, line_number / std::max(seconds, 1e-9),
                    target_tokens / std::max(seconds, 1e-9));
      nmt::cli::print_line(summary);
    }
    if (!out.reference_path.empty()) report_scores(best, out.reference_path);
    return 0;
  });
}

}  // namespace nmt::tools::translate_tool
