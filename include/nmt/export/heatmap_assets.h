#pragma once
// The heatmap drawing shared by every page that shows attention (nmt-align --html and
// nmt-serve's page): one stylesheet and one script, so both draw a matrix the same way.
#include <string>

namespace nmt {

/// CSS for the heatmap table, its picker and the hover tip (without <style> tags).
const std::string& heatmap_css();

/// Script (without <script> tags) defining `window.nmtHeatmap`:
///   views(s)                 -> [{name, matrix}]: model attention, each layer's head-mean, each head
///   draw(table, matrix, rows, cols): one cell per (target, source) entry, class "cell"
///   render(container, s)     -> draws a matrix picker and the table for one nmt-align
///                               JSON object `s` (a note when it has no attention)
/// It also shows a cell's value in the element with id "tip" on hover.
const std::string& heatmap_script();

/// Page-building helpers both pages use: every `from` in `text` replaced by `to`, and
/// text escaped for HTML content.
std::string replace_all(std::string text, const std::string& from, const std::string& to);
std::string escape_html(const std::string& text);

}  // namespace nmt
