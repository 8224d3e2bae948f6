#include "page.h"

#include "nmt/export/heatmap_assets.h"

namespace nmt::serve {
namespace {

const char* const kHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nmt-serve</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 70em; }
textarea { width: 100%; max-width: 50em; height: 4.5em; font-size: 1em; }
.controls { margin: 0.5em 0 1em; }
.controls label { margin-right: 1em; }
.controls input[type=number] { width: 4em; }
.meta { color: #555; font-size: 0.9em; }
#error { color: #a00; }
#translation div.line { padding: 2px 4px; cursor: pointer; font-size: 1.1em; }
#translation div.line.chosen { background: #e8eefc; }
#nbest li { cursor: pointer; padding: 1px 4px; }
#nbest li.chosen { background: #e8eefc; }
#nbest .score { color: #555; font-family: monospace; margin-left: 0.8em; }
@CSS@</style>
</head>
<body>
<h1>@TITLE@</h1>
<p class="meta" id="model"></p>
<textarea id="source" placeholder="One sentence per line"></textarea>
<div><input id="prefix" size="60" placeholder="Start of the translation (first line): the model completes it as you type"></div>
<div class="controls">
<label>beam <input type="number" id="beam" min="1" max="32" value="5"></label>
<label>n-best <input type="number" id="nbest-size" min="1" max="32" value="5"></label>
<button id="translate">Translate</button>
<span id="status" class="meta"></span>
</div>
<p id="error"></p>
<h2>Translation</h2>
<div id="translation"></div>
<h2>N-best list</h2>
<ol id="nbest"></ol>
<h2>Attention</h2>
<p class="meta">Rows: target tokens; columns: source tokens. Darker = more attention. Hover a cell for its value.</p>
<div id="heatmap"></div>
<div id="tip"></div>
<script>)HTML";

// The page's own part: requests, the lists, and which hypothesis is drawn.
const char* const kPageScript = R"JS(
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var results = [], chosenLine = 0, chosenHypothesis = 0, requests = 0;
  function hypotheses(entry) { return entry.nbest || [entry]; }
  function showHeatmap() {
    var box = $("heatmap"); box.innerHTML = "";
    var entry = results[chosenLine];
    if (!entry) return;
    var h = hypotheses(entry)[chosenHypothesis];
    if (h && h.attention) nmtHeatmap.render(box, h.attention);
  }
  function showNbest() {
    var list = $("nbest"); list.innerHTML = "";
    var entry = results[chosenLine];
    if (!entry) return;
    hypotheses(entry).forEach(function (h, k) {
      var li = document.createElement("li");
      li.className = k === chosenHypothesis ? "chosen" : "";
      li.appendChild(document.createTextNode(h.text));
      var score = document.createElement("span"); score.className = "score"; score.textContent = h.score.toFixed(4);
      li.appendChild(score);
      li.addEventListener("click", function () { chosenHypothesis = k; showNbest(); showHeatmap(); });
      list.appendChild(li);
    });
  }
  function showTranslations() {
    var box = $("translation"); box.innerHTML = "";
    results.forEach(function (entry, i) {
      var div = document.createElement("div");
      div.className = "line" + (i === chosenLine ? " chosen" : "");
      div.textContent = entry.text + (entry.warning ? "  (" + entry.warning + ")" : "");
      div.addEventListener("click", function () { chosenLine = i; chosenHypothesis = 0; showTranslations(); showNbest(); showHeatmap(); });
      box.appendChild(div);
    });
  }
  function translate() {
    var lines = $("source").value.split("\n").filter(function (l) { return l.trim() !== ""; });
    var prefix = $("prefix").value;
    $("error").textContent = "";
    if (lines.length === 0) { $("error").textContent = "type a sentence first"; return; }
    var beam = parseInt($("beam").value, 10) || 1;
    var nbest = Math.min(parseInt($("nbest-size").value, 10) || 1, beam);
    $("status").textContent = "translating\u2026";
    var request = { text: lines, beam: beam, nbest: nbest, attention: true };
    if (prefix !== "") request.prefix = lines.map(function (l, i) { return i === 0 ? prefix : ""; });
    var asked = ++requests;
    fetch("/v1/translate", { method: "POST", headers: { "Content-Type": "application/json" },
                             body: JSON.stringify(request) })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .then(function (answer) {
        if (asked !== requests) return;  // a later keystroke's answer is on its way
        $("status").textContent = "";
        if (!answer.ok) { $("error").textContent = answer.body.error || "request failed"; return; }
        results = answer.body.translations; chosenLine = 0; chosenHypothesis = 0;
        showTranslations(); showNbest(); showHeatmap();
      })
      .catch(function (e) { $("status").textContent = ""; $("error").textContent = String(e); });
  }
  $("translate").addEventListener("click", translate);
  // Interactive translation: each pause in typing the prefix asks for a new completion.
  var typing = null;
  $("prefix").addEventListener("input", function () {
    clearTimeout(typing);
    typing = setTimeout(function () { if ($("source").value.trim() !== "") translate(); }, 250);
  });
  fetch("/v1/model").then(function (r) { return r.json(); }).then(function (m) {
    $("model").textContent = m.family + " model, " + m.parameters.toLocaleString() + " parameters, vocabularies " +
      m.source_vocab + " / " + m.target_vocab;
  }).catch(function () {});
})();
)JS";

}  // namespace

std::string translate_page(const std::string& title) {
  const auto head = replace_all(replace_all(kHead, "@TITLE@", escape_html(title)), "@CSS@", heatmap_css());
  return head + heatmap_script() + kPageScript + "</script>\n</body>\n</html>\n";
}

}  // namespace nmt::serve
