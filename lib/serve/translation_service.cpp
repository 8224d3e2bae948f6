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
  translate.search = options.search;
  translate.search.keep_attention = options.attention;
  return translate;
}

std::vector<LineResult> TranslationService::translate(const std::vector<std::string>& lines,
                                                      const std::vector<const AdmittedLine*>& admitted,
                                                      const JobOptions& options) {
  if (admitted.size() != lines.size())
    throw Error(std::to_string(admitted.size()) + " admitted lines for " + std::to_string(lines.size()) + " lines");
  std::vector<Translation> prepared;
  prepared.reserve(admitted.size());
  // Copies: a band that fails is translated again, job by job, from the same admitted lines.
  for (const auto* line : admitted) prepared.push_back(std::any_cast<const Translation&>(line->prepared));
  std::vector<Translation> translations;
  try {
    translations = translator_.translate_prepared(std::move(prepared), translate_options(options).search);
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

AdmittedLine TranslationService::admit(const std::string& line, const LineGuide& guide) const {
  auto prepared = translator_.prepare(line, guide.prefix, guide.constraints);
  if (!prepared.guide_problem.empty()) throw RequestError(413, prepared.guide_problem);
  const auto tokens = static_cast<int64_t>(prepared.source_ids.size()) + 1;
  return {tokens, std::move(prepared)};
}

nlohmann::json TranslationService::describe() const {
  auto description = model_summary(translator_.model());
  description["max_input_tokens"] = translator_.input_token_limit();
  const auto& shortlist = translator_.options().shortlist;
  description["shortlist"] = shortlist ? nlohmann::json(nmt::describe(*shortlist)) : nlohmann::json(nullptr);
  return description;
}

}  // namespace nmt::serve
