#include "nmt/export/attention_html.h"

#include "nmt/export/heatmap_assets.h"

namespace nmt {
namespace {

// The page: data in a JSON script element, drawn at load time by the shared heatmap
// script (heatmap_assets.cpp) plus the per-sentence headings below.
const char* const kHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>@TITLE@</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
section { margin-bottom: 2.5em; }
h2 { font-size: 1.05em; margin-bottom: 0.3em; }
.meta { color: #555; font-size: 0.9em; margin: 0.2em 0 0.6em; }
@CSS@</style>
</head>
<body>
<h1>@TITLE@</h1>
<p class="meta">Rows: target tokens; columns: source tokens. Darker = more attention. Hover a cell for its value.</p>
<div id="sentences"></div>
<div id="tip"></div>
<script type="application/json" id="data">
)HTML";

const char* const kPageScript = R"JS(
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var root = document.getElementById("sentences");
  data.forEach(function (s) {
    var section = document.createElement("section");
    var h2 = document.createElement("h2");
    h2.textContent = "Line " + s.line + (s.mode === "force" ? " (forced reference)" : "");
    section.appendChild(h2);
    var meta = document.createElement("div"); meta.className = "meta";
    section.appendChild(meta);
    root.appendChild(section);
    if (s.skipped) { meta.textContent = "skipped: " + s.warning; return; }
    meta.textContent = s.source.text + "  \u2192  " + s.target.text + "   (log-prob " + s.log_prob.toFixed(3) + ")";
    nmtHeatmap.render(section, s);
  });
})();
)JS";

}  // namespace

std::string attention_html(const std::vector<nlohmann::json>& sentences, const std::string& title) {
  const auto data = nlohmann::json(sentences).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const auto head = replace_all(replace_all(kHead, "@TITLE@", escape_html(title)), "@CSS@", heatmap_css());
  // "</" inside a script element would end it early; "<\/" means the same to JSON.
  return head + replace_all(data, "</", "<\\/") + "\n</script>\n<script>" + heatmap_script() + kPageScript +
         "</script>\n</body>\n</html>\n";
}

}  // namespace nmt
