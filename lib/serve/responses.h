#pragma once
// The JSON answers of nmt-serve (docs/serve.md describes them).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "nmt/serve/request.h"
#include "nmt/serve/line_result.h"

namespace nmt::serve {

/// POST /v1/translate: {"translations": [{"text", "score", "tokens", "attention"?,
/// "warning"?, "nbest"? [{"text", "score", "tokens", "attention"?}, ...]}, ...]}, one
/// entry per input line in input order. "nbest" (best first, entry 0 = the top-level
/// fields) is present when the request asked for nbest > 1.
nlohmann::json translate_response(const std::vector<LineResult>& results, const JobOptions& options);

/// POST /translator/translate, OpenNMT-py's shape: a list of n_best lists, list k holding
/// the k-th best hypothesis of every input: {"src", "tgt", "n_best", "pred_score"}.
/// A line with no translation (blank) gets "" and score 0 in every list, as OpenNMT-py.
nlohmann::json opennmt_response(const std::vector<std::string>& sources, const std::vector<LineResult>& results,
                                int nbest);

/// {"error": message, "status": "error"} (the key OpenNMT-py clients read too).
nlohmann::json error_body(const std::string& message);

}  // namespace nmt::serve
