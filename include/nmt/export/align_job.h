#pragma once
// nmt-align's work, streamed: sources (and, for forced decoding, line-aligned references)
// are read in blocks, translated or force-decoded, and each block's JSON Lines are handed
// on as soon as it is done, so memory stays flat on any corpus size. The HTML page takes
// only the first `html_max` sentences.
#include <nlohmann/json.hpp>

#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "nmt/decoding/translator.h"
#include "nmt/export/attention_export.h"

namespace nmt {

struct AlignJobOptions {
  AttentionExportOptions exporting;
  int nbest = 1;              ///< hypotheses exported per sentence when translating (ranks 0..nbest-1)
  size_t block_lines = 2000;  ///< lines translated together (sorted by length inside a block)
  size_t html_max = 100;      ///< sentences kept for the HTML page
};

struct AlignJobResult {
  long lines = 0;
  long warnings = 0;
  long objects = 0;                            ///< JSON lines written
  std::vector<nlohmann::json> html_sentences;  ///< the first html_max exported objects
};

/// `source_name` names the sources in messages ("stdin" or the file). `targets` is null to
/// translate, else the references to force-decode (`target_name` names them in messages). `write` gets each JSON line (with its newline); `warn` each
/// problem line (line number, text). Throws nmt::Error when the references and the
/// sources have different line counts (after the lines both have were written).
AlignJobResult run_align_job(const Translator& translator, std::istream& sources, const std::string& source_name,
                             std::istream* targets, const std::string& target_name, const AlignJobOptions& options,
                             const std::function<void(const std::string&)>& write,
                             const std::function<void(long, const std::string&)>& warn);

}  // namespace nmt
