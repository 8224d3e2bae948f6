#include "nmt/export/align_job.h"

#include <torch/torch.h>

#include <sstream>

#include "nmt/base/error.h"
#include "nmt/decoding/search.h"
#include "nmt/text/batching.h"
#include "nmt/text/corpus.h"
#include "nmt/text/encoding_check.h"
#include "nmt/text/line_reader.h"

namespace nmt {
namespace {

std::string blank_or_bad(const std::string& line) {
  if (auto problem = utf8_problem(line); !problem.empty()) return problem;
  if (is_blank(line)) return "empty line";
  return "";
}

std::string to_line(const nlohmann::json& object) {
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

class AlignJob {
 public:
  AlignJob(const Translator& translator, const std::string& target_name, const AlignJobOptions& options,
           const std::function<void(const std::string&)>& write, const std::function<void(long, const std::string&)>& warn)
      : translator_(translator), model_(translator.model()), target_name_(target_name), options_(options),
        write_(write), warn_(warn) {}

  void translate_block(const std::vector<std::string>& sources) {
    const auto translations = translator_.translate(sources, std::vector<std::string>(sources.size()), {}, result_.lines);
    for (size_t i = 0; i < sources.size(); ++i) {
      const long line = ++result_.lines;
      const auto& t = translations[i];
      std::string problem = blank_or_bad(sources[i]);
      if (problem.empty() && t.hypotheses.empty()) problem = t.warning.empty() ? "no translation" : t.warning;
      if (!problem.empty()) {
        skip(line, "translate", problem);
        continue;
      }
      if (t.truncated) warning(line, t.warning);
      const size_t count = std::min(t.hypotheses.size(), static_cast<size_t>(options_.nbest));
      for (size_t rank = 0; rank < count; ++rank) {
        ExportInput input{line, "translate", sources[i], t.source_ids, &t.hypotheses[rank], t.texts[rank]};
        auto object = export_attention(model_, input, options_.exporting);
        if (options_.nbest > 1) object["rank"] = rank;
        emit(object);
      }
    }
  }

  void force_block(const std::vector<std::string>& sources, const std::vector<std::string>& targets) {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < sources.size(); ++i) {
      const long line = ++result_.lines;
      std::string problem = blank_or_bad(sources[i]);
      if (problem.empty())
        if (auto bad = blank_or_bad(targets[i]); !bad.empty()) problem = target_name_ + ": " + bad;
      ExportInput input{line, "force", sources[i], {}, nullptr, ""};
      std::vector<int> target_ids;
      if (problem.empty()) {
        input.source_ids = model_.source_tokenizer.encode(sources[i]);
        target_ids = model_.target_tokenizer.encode(targets[i]);
        problem = length_problem(input.source_ids.size(), target_ids.size());
      }
      if (!problem.empty()) {
        skip(line, "force", problem);
        continue;
      }
      std::vector<const std::vector<int>*> row{&input.source_ids};
      const auto& device = translator_.inference_model().device();
      const auto forced = force_decode(*model_.model, pad_sequences(row, -1, SpecialIds::kEos).to(device),
                                       target_ids, true);
      input.hypothesis = &forced;
      input.target_text = model_.target_tokenizer.decode(target_ids);
      emit(export_attention(model_, input, options_.exporting));
    }
  }

  AlignJobResult& result() { return result_; }

 private:
  // Forced decoding cannot cut a reference: a pair the model's positions cannot hold is skipped.
  std::string length_problem(size_t source_tokens, size_t target_tokens) const {
    if (source_tokens == 0) return "the source has no tokens after normalisation (only invisible characters?)";
    const int64_t positions = model_.model->max_positions();
    if (positions == 0) return "";
    if (static_cast<int64_t>(source_tokens) + 1 > positions || static_cast<int64_t>(target_tokens) + 2 > positions)
      return "pair of " + std::to_string(source_tokens) + " / " + std::to_string(target_tokens) +
             " tokens is longer than the model's " + std::to_string(positions) + " positions; line skipped";
    return "";
  }

  void warning(long line, const std::string& text) {
    ++result_.warnings;
    warn_(line, text);
  }

  void skip(long line, const std::string& mode, const std::string& problem) {
    warning(line, problem);
    emit(skipped_line(line, mode, problem));
  }

  void emit(const nlohmann::json& object) {
    write_(to_line(object));
    ++result_.objects;
    if (result_.html_sentences.size() < options_.html_max) result_.html_sentences.push_back(object);
  }

  const Translator& translator_;
  const LoadedModel& model_;  // the translator's
  std::string target_name_;
  const AlignJobOptions& options_;
  const std::function<void(const std::string&)>& write_;
  const std::function<void(long, const std::string&)>& warn_;
  AlignJobResult result_;
};

}  // namespace

AlignJobResult run_align_job(const Translator& translator, std::istream& sources, const std::string& source_name,
                             std::istream* targets, const std::string& target_name, const AlignJobOptions& options,
                             const std::function<void(const std::string&)>& write,
                             const std::function<void(long, const std::string&)>& warn) {
  AlignJob job(translator, target_name, options, write, warn);
  std::vector<std::string> source_block, target_block;
  std::string source_line, target_line;
  // Lines are cut where the model stops reading (Translator::input_byte_limit), so that
  // memory stays bounded whatever a line's length; the cut is a warning on that line.
  const size_t max_bytes = translator.input_byte_limit();
  LineReader source_lines(sources, source_name, max_bytes, LineReader::Overlong::cut);
  std::istringstream no_targets;
  LineReader target_lines(targets != nullptr ? *targets : no_targets, target_name, max_bytes, LineReader::Overlong::cut);
  auto warn_if_cut = [&](const LineReader& reader) {
    if (reader.dropped() > 0)
      warn(reader.number(), reader.name() + ": " + cut_warning(reader) + " (all the model reads)");
  };
  auto flush = [&] {
    if (targets != nullptr) job.force_block(source_block, target_block);
    else job.translate_block(source_block);
    source_block.clear(), target_block.clear();
  };
  EncodingCheck source_encoding(source_lines.name()), target_encoding(target_lines.name());
  while (source_lines.next(source_line)) {
    warn_if_cut(source_lines);
    source_encoding.line(source_line);
    if (targets != nullptr) {
      if (!target_lines.next(target_line)) {
        flush();
        long source_count = source_lines.number();
        while (source_lines.next(source_line)) source_count = source_lines.number();
        throw Error(target_name + " has " + std::to_string(target_lines.number()) + " lines but " + source_name + " has " +
                    std::to_string(source_count) + "; they must be line-aligned");
      }
      warn_if_cut(target_lines);
      target_encoding.line(target_line);
      target_block.push_back(std::move(target_line));
    }
    source_block.push_back(std::move(source_line));
    if (source_block.size() >= options.block_lines) flush();
  }
  source_encoding.finish();
  target_encoding.finish();
  flush();
  if (targets != nullptr && target_lines.next(target_line)) {
    while (target_lines.next(target_line)) {
    }
    const long target_count = target_lines.number();
    throw Error(target_name + " has " + std::to_string(target_count) + " lines but " + source_name + " has " +
                std::to_string(job.result().lines) + "; they must be line-aligned");
  }
  return job.result();
}

}  // namespace nmt
