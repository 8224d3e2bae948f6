#pragma once
// What the server answers for one input line: free of LibTorch, so that the HTTP side
// (routes, JSON, batching) builds without it (tests/fuzz/fuzz_serve_request.cpp does).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace nmt::serve {

struct HypothesisResult {
  std::string text;
  double score = 0;                 ///< what ranking uses (penalties applied), as nmt-translate
  double log_prob = 0;              ///< raw sum of token log-probs
  std::vector<std::string> tokens;  ///< target pieces, "</s>" last when finished
  nlohmann::json attention;         ///< nmt-align's object (export_attention), or null
};

struct LineResult {
  std::string warning;  ///< e.g. the input was truncated
  std::vector<HypothesisResult> hypotheses;  ///< best first; empty for a blank line
};

}  // namespace nmt::serve
