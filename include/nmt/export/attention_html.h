#pragma once
// A self-contained HTML page (no network needed) drawing each sentence's attention
// heatmap from nmt-align's JSON objects: tokens on the axes, values on hover, and a
// picker for the matrix (model attention, each layer's head-mean, each head).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace nmt {

std::string attention_html(const std::vector<nlohmann::json>& sentences, const std::string& title);

}  // namespace nmt
