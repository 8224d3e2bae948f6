#pragma once
// The model side of nmt-serve: one loaded checkpoint, translated through the same
// nmt::Translator as nmt-translate. Not thread-safe by design: only the batch worker
// calls it, so there is one LibTorch intra-op pool and one tokenizer user. A line is
// encoded once, when the queue admits it; its batch searches what that made.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "nmt/decoding/translator.h"
#include "nmt/models/checkpoint.h"
#include "nmt/serve/batch_queue.h"
#include "nmt/serve/line_result.h"
#include "nmt/serve/request.h"

namespace nmt::serve {

class TranslationService {
 public:
  /// `base` supplies what requests cannot choose (batch tokens, length limits). One
  /// Translator over `model`, built here, translates every batch with the batch's search.
  TranslationService(InferenceModelPtr model, TranslateOptions base);

  /// `line` with its guide (prefix, constraints) checked and encoded (Translator::prepare),
  /// costing its source tokens plus eos in a batch. Throws RequestError 413 when the model
  /// cannot take the guide (nmt::guide_problem).
  AdmittedLine admit(const std::string& line, const LineGuide& guide) const;

  /// Translates lines admit() prepared with `options`; one result per line, in order.
  /// `lines`: their text (for the attention object).
  std::vector<LineResult> translate(const std::vector<std::string>& lines, const std::vector<const AdmittedLine*>& admitted,
                                    const JobOptions& options);

  /// GET /v1/model: family, sizes, vocabularies, the model config, limits.
  nlohmann::json describe() const;

  /// The TranslateOptions a request with `options` is translated with.
  TranslateOptions translate_options(const JobOptions& options) const;

 private:
  LineResult to_result(const Translation& translation, const std::string& line, const JobOptions& options);

  TranslateOptions base_;
  Translator translator_;
};

}  // namespace nmt::serve
