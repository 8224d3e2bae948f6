#pragma once
// A Marian lexical shortlist file as nmt-import reads it beside a model: binary
// (lex.*.s2t.bin, read whole) or text (lex.s2t, gzipped or not, read a line at a time), told
// apart by the binary form's magic (export/marian_shortlist.h has both readings).
#include <optional>
#include <string>
#include <vector>

#include "nmt/export/marian_shortlist.h"
#include "nmt/text/tokenizer.h"

namespace nmt {

/// One side's vocabulary as the import made it: our tokenizer, and our id of each Marian id.
struct MarianVocabularySide {
  const Tokenizer& tokenizer;
  const std::vector<int>& our_id_of_marian_id;
};

/// The shortlist at `path` in Marian's ids, for vocabularies of `marian_source` and
/// `marian_target` ids. A text file is cut by `text_cut` (Marian's defaults where not given);
/// a binary one with a cut is refused (its header says how it was cut). Throws nmt::Error
/// naming the file.
MarianLexicalShortlist read_marian_shortlist_file(const std::string& path, const MarianVocabularySide& source,
                                                  const MarianVocabularySide& target, int64_t marian_source,
                                                  int64_t marian_target,
                                                  const std::optional<MarianShortlistCut>& text_cut);

}  // namespace nmt
