#include "nmt/serve/translation_service.h"

#include <torch/torch.h>

#include "nmt/export/attention_export.h"
#include "nmt/text/corpus.h"

namespace nmt::serve {

TranslationService::TranslationService(LoadedModel model, TranslateOptions base, const torch::Device& device)
    : model_(std::move(model)), base_(std::move(base)), device_(device) {
  base_.validate();
  model_.model->eval();
}

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
  // A Translator per batch, because each batch has its own search options: it shares the
  // weights and tokenizer processors and copies only the config and the tokenizers'
  // serialized protos (microseconds), and it is the very class nmt-translate runs.
  Translator translator(model_, translate_options(options), device_);
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
    translations = translator.translate(lines, prefixes, constraints);
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
  LineResult result{translation.warning, {}};
  for (size_t k = 0; k < translation.hypotheses.size(); ++k) {
    const auto& h = translation.hypotheses[k];
    HypothesisResult out{translation.texts[k], h.score, h.log_prob, {}, nullptr};
    for (int id : h.tokens) out.tokens.push_back(model_.target_tokenizer.piece(id));
    if (h.finished) out.tokens.push_back("</s>");
    if (options.attention) {
      // line 1 here; responses.cpp numbers it within its request.
      const ExportInput input{1, "translate", line, translation.source_ids, &h, out.text};
      out.attention = export_attention(model_, input, AttentionExportOptions{});
    }
    result.hypotheses.push_back(std::move(out));
  }
  return result;
}

int64_t TranslationService::cost(const std::string& line, const LineGuide& guide) const {
  // Counted as Translator::prepare counts them (blank phrases and prefixes are dropped).
  const size_t prefix_tokens = is_blank(guide.prefix) ? 0 : model_.target_tokenizer.encode(guide.prefix).size();
  size_t phrases = 0;
  for (const auto& phrase : guide.constraints)
    phrases += !is_blank(phrase) && !model_.target_tokenizer.encode(phrase).empty();
  if (const auto problem = guide_problem(*model_.model, prefix_tokens, phrases); !problem.empty())
    throw RequestError(413, problem);
  return static_cast<int64_t>(model_.source_tokenizer.encode(line).size()) + 1;
}

nlohmann::json TranslationService::describe() const {
  const auto& config = model_.config;
  int64_t parameters = 0;
  for (const auto& p : model_.model->parameters()) parameters += p.numel();
  // The limit alone: a Translator would also convert the shared model's weights.
  const auto max_input_tokens = input_token_limit(*model_.model, base_.search, base_.max_input_tokens);
  auto model_section = config_to_json(config)["model"];
  return {{"family", config.model.arch},
          {"parameters", parameters},
          {"source_vocab", model_.source_tokenizer.vocab_size()},
          {"target_vocab", model_.target_tokenizer.vocab_size()},
          {"shared_vocab", model_.source_tokenizer.serialized() == model_.target_tokenizer.serialized()},
          {"has_attention", model_.model->has_attention()},
          {"attention_layers", model_.model->attention_layers()},
          {"max_positions", model_.model->max_positions()},
          {"max_input_tokens", max_input_tokens},
          {"config", model_section}};
}

}  // namespace nmt::serve
