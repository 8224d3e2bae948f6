#include "nmt/export/heatmap_assets.h"

namespace nmt {

const std::string& heatmap_css() {
  static const std::string css = R"CSS(
table.heatmap { border-collapse: collapse; }
table.heatmap td.cell { width: 26px; height: 22px; border: 1px solid #eee; }
table.heatmap th { font-weight: normal; font-size: 0.85em; padding: 2px 4px; white-space: nowrap; }
table.heatmap th.source { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; }
table.heatmap th.target { text-align: right; }
#tip { position: fixed; background: #333; color: #fff; padding: 3px 6px; font-size: 0.85em;
       border-radius: 3px; pointer-events: none; display: none; }
)CSS";
  return css;
}

const std::string& heatmap_script() {
  static const std::string script = R"JS(
window.nmtHeatmap = (function () {
  "use strict";
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
  function render(container, s) {
    if (!s.has_attention) {
      var note = document.createElement("p"); note.textContent = s.note; container.appendChild(note);
      return;
    }
    var list = views(s);
    var select = document.createElement("select");
    select.className = "matrix-picker";
    list.forEach(function (v, i) { var o = document.createElement("option"); o.value = i; o.textContent = v.name; select.appendChild(o); });
    container.appendChild(select);
    var table = document.createElement("table"); table.className = "heatmap";
    container.appendChild(table);
    var rows = labels(s.target, s.level), cols = labels(s.source, s.level);
    select.addEventListener("change", function () { draw(table, list[select.value].matrix, rows, cols); });
    draw(table, list[0].matrix, rows, cols);
  }
  document.addEventListener("mouseover", function (e) {
    var tip = document.getElementById("tip");
    if (!tip) return;
    if (e.target.classList && e.target.classList.contains("cell")) {
      tip.textContent = e.target.dataset.label; tip.style.display = "block";
    } else { tip.style.display = "none"; }
  });
  document.addEventListener("mousemove", function (e) {
    var tip = document.getElementById("tip");
    if (tip) { tip.style.left = (e.clientX + 12) + "px"; tip.style.top = (e.clientY + 12) + "px"; }
  });
  return { views: views, draw: draw, render: render };
})();
)JS";
  return script;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string escape_html(const std::string& text) {
  return replace_all(replace_all(replace_all(text, "&", "&amp;"), "<", "&lt;"), ">", "&gt;");
}

}  // namespace nmt
