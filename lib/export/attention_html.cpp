#include "nmt/export/attention_html.h"

namespace nmt {
namespace {

// The page: data in a JSON script element, drawn by a small script at load time.
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
table.heatmap { border-collapse: collapse; }
table.heatmap td.cell { width: 26px; height: 22px; border: 1px solid #eee; }
table.heatmap th { font-weight: normal; font-size: 0.85em; padding: 2px 4px; white-space: nowrap; }
table.heatmap th.source { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; }
table.heatmap th.target { text-align: right; }
#tip { position: fixed; background: #333; color: #fff; padding: 3px 6px; font-size: 0.85em;
       border-radius: 3px; pointer-events: none; display: none; }
</style>
</head>
<body>
<h1>@TITLE@</h1>
<p class="meta">Rows: target tokens; columns: source tokens. Darker = more attention. Hover a cell for its value.</p>
<div id="sentences"></div>
<div id="tip"></div>
<script type="application/json" id="data">
)HTML";

const char* const kTail = R"HTML(
</script>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var tip = document.getElementById("tip");
  function views(s) {
    var list = [];
    if (s.attention) list.push({ name: "model attention (" + (s.attention_source || "") + ")", matrix: s.attention });
    (s.layers || []).forEach(function (l) {
      list.push({ name: "layer " + l.layer + " head-mean", matrix: l.mean });
      (l.heads || []).forEach(function (h, i) { list.push({ name: "layer " + l.layer + " head " + i, matrix: h }); });
    });
    return list;
  }
  function labels(side, level) { return level === "word" ? side.words : side.pieces; }
  function draw(table, matrix, rows, cols) {
    table.innerHTML = "";
    var head = table.insertRow();
    head.appendChild(document.createElement("th"));
    cols.forEach(function (c) { var th = document.createElement("th"); th.className = "source"; th.textContent = c; head.appendChild(th); });
    matrix.forEach(function (row, t) {
      var tr = table.insertRow();
      var th = document.createElement("th"); th.className = "target"; th.textContent = rows[t]; tr.appendChild(th);
      row.forEach(function (v, s) {
        var td = tr.insertCell();
        td.className = "cell";
        td.dataset.value = v;
        td.dataset.label = rows[t] + " \u2192 " + cols[s] + ": " + v.toFixed(3);
        td.title = td.dataset.label;
        td.style.background = "rgba(20, 60, 160, " + Math.min(1, Math.max(0, v)).toFixed(3) + ")";
      });
    });
  }
  var root = document.getElementById("sentences");
  data.forEach(function (s) {
    var section = document.createElement("section");
    var h2 = document.createElement("h2");
    h2.textContent = "Line " + s.line + (s.mode === "force" ? " (forced reference)" : "");
    section.appendChild(h2);
    var meta = document.createElement("div"); meta.className = "meta";
    if (s.skipped) { meta.textContent = "skipped: " + s.warning; section.appendChild(meta); root.appendChild(section); return; }
    meta.textContent = s.source.text + "  \u2192  " + s.target.text + "   (log-prob " + s.log_prob.toFixed(3) + ")";
    section.appendChild(meta);
    if (!s.has_attention) {
      var note = document.createElement("p"); note.textContent = s.note; section.appendChild(note);
      root.appendChild(section); return;
    }
    var list = views(s);
    var select = document.createElement("select");
    list.forEach(function (v, i) { var o = document.createElement("option"); o.value = i; o.textContent = v.name; select.appendChild(o); });
    section.appendChild(select);
    var table = document.createElement("table"); table.className = "heatmap";
    section.appendChild(table);
    var rows = labels(s.target, s.level), cols = labels(s.source, s.level);
    select.addEventListener("change", function () { draw(table, list[select.value].matrix, rows, cols); });
    draw(table, list[0].matrix, rows, cols);
    root.appendChild(section);
  });
  document.addEventListener("mouseover", function (e) {
    if (e.target.classList && e.target.classList.contains("cell")) {
      tip.textContent = e.target.dataset.label; tip.style.display = "block";
    } else { tip.style.display = "none"; }
  });
  document.addEventListener("mousemove", function (e) { tip.style.left = (e.clientX + 12) + "px"; tip.style.top = (e.clientY + 12) + "px"; });
})();
</script>
</body>
</html>
)HTML";

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string escape_html(const std::string& text) {
  return replace_all(replace_all(replace_all(text, "&", "&amp;"), "<", "&lt;"), ">", "&gt;");
}

}  // namespace

std::string attention_html(const std::vector<nlohmann::json>& sentences, const std::string& title) {
  const auto data = nlohmann::json(sentences).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // "</" inside a script element would end it early; "<\/" means the same to JSON.
  return replace_all(kHead, "@TITLE@", escape_html(title)) + replace_all(data, "</", "<\\/") + kTail;
}

}  // namespace nmt
