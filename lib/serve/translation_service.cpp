#include "nmt/serve/translation_service.h"

#include <torch/torch.h>

#include "nmt/export/attention_export.h"
#include "nmt/models/model_summary.h"
#include "nmt/text/corpus.h"

namespace nmt::serve {

TranslationService::TranslationService(InferenceModelPtr model, TranslateOptions base)
    : base_(std::move(base)), translator_(std::move(model), base_) {}

TranslateOptions TranslationService::translate_options(const JobOptions& options) const {
  TranslateOptions translate = base_;
  translate.search.beam = options.beam;
  translate.search.nbest = options.nbest;
  translate.search.alpha = options.alpha;
  translate.search.keep_attention = options.attention;
  return translate;
}

std::vector<LineResult> TranslationService::translate(const std::vector<std::string>& lines,
                                                      const std::vector<LineGuide>& guides,
                                                      const JobOptions& options) {
  std::vector<std::string> prefixes(lines.size());
  std::vector<std::vector<std::string>> constraints;
  bool constrained = false;
  for (size_t i = 0; i < guides.size(); ++i) {
    prefixes[i] = guides[i].prefix;
    constrained = constrained || !guides[i].constraints.empty();
  }
  if (constrained)
    for (const auto& guide : guides) constraints.push_back(guide.constraints);
  std::vector<Translation> translations;
  try {
    translations = translator_.translate(lines, prefixes, constraints, translate_options(options).search);
  } catch (const c10::Error& e) {
    throw Error(e.what_without_backtrace());  // the answer names the fault, not LibTorch's stack
  }
  std::vector<LineResult> results;
  results.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) results.push_back(to_result(translations[i], lines[i], options));
  return results;
}

LineResult TranslationService::to_result(const Translation& translation, const std::string& line,
                                         const JobOptions& options) {
  const auto& model = translator_.model();
  LineResult result{translation.warning, {}};
  for (size_t k = 0; k < translation.hypotheses.size(); ++k) {
    const auto& h = translation.hypotheses[k];
    HypothesisResult out{translation.texts[k], h.score, h.log_prob, {}, nullptr};
    for (int id : h.tokens) out.tokens.push_back(model.target_tokenizer.piece(id));
    if (h.finished) out.tokens.push_back("</s>");
    if (options.attention) {
      // line 1 here; responses.cpp numbers it within its request.
      const ExportInput input{1, "translate", line, translation.source_ids, &h, out.text};
      out.attention = export_attention(model, input, AttentionExportOptions{});
    }
    result.hypotheses.push_back(std::move(out));
  }
  return result;
}

int64_t TranslationService::cost(const std::string& line, const LineGuide& guide) const {
  if (const auto problem = translator_.guide_problem(guide.prefix, guide.constraints); !problem.empty())
    throw RequestError(413, problem);
  return static_cast<int64_t>(translator_.model().source_tokenizer.encode(line).size()) + 1;
}

nlohmann::json TranslationService::describe() const {
  auto description = model_summary(translator_.model());
  description["max_input_tokens"] = translator_.input_token_limit();
  return description;
}

}  // namespace nmt::serve
