#pragma once
// GET / of nmt-serve: a self-contained page (no network resources) to type sentences,
// translate them through POST /v1/translate, see the n-best list with scores and the
// attention heatmap of the chosen hypothesis, drawn by the same script as nmt-align --html.
#include <string>

namespace nmt::serve {

/// The page, with `title` (HTML-escaped) in its heading.
std::string translate_page(const std::string& title);

}  // namespace nmt::serve
