#pragma once
// The requests nmt-serve accepts, checked before anything is queued: JSON shape and
// types, UTF-8, non-empty lines, and the size limits. A bad request becomes a
// RequestError carrying the HTTP status and a message naming the problem.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/base/error.h"
#include "nmt/decoding/search_option_table.h"

namespace nmt::serve {

/// The search a request asks for: the server's settings (its flags) with what the request
/// chose of the options search_option_table.h lets requests choose. Requests are batched
/// together only when these are equal (the worker runs one search per batch).
struct JobOptions {
  SearchOptions search;
  bool attention = false;  ///< also return nmt-align's attention object per hypothesis

  bool operator==(const JobOptions& other) const {
    return same_search_settings(search, other.search) && attention == other.attention;
  }
  bool operator!=(const JobOptions& other) const { return !(*this == other); }
};

struct RequestLimits {
  size_t max_lines = 64;         ///< lines per request
  size_t max_line_bytes = 1024;  ///< bytes per line (UTF-8)
  int max_beam = 32;             ///< beam (and so nbest) per request
  /// lines x beam per request: what its search costs the worker (64 lines at beam 8).
  size_t max_beam_lines = 512;
  /// lines x nbest per request with "attention": each such hypothesis carries a matrix per
  /// layer and head (64 lines, or 16 lines with nbest 4 ...).
  size_t max_attention_hypotheses = 64;
};

/// Throws RequestError 413 naming the limit when `lines` lines with `options` would cost
/// more than `limits` allow (max_beam_lines, max_attention_hypotheses).
void check_request_cost(size_t lines, const JobOptions& options, const RequestLimits& limits);

/// The most bytes a request body may have under `limits`: max_lines lines of
/// max_line_bytes, each byte escaped (\u00XX) in the worst case, plus the JSON around
/// them. Saturates at SIZE_MAX instead of wrapping for huge limits.
size_t max_request_bytes(const RequestLimits& limits);

class RequestError : public Error {
 public:
  RequestError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

/// What a line asks of its translation besides the search options (nmt-translate's
/// --prefix and --constraints).
struct LineGuide {
  std::string prefix;                    ///< the start of every hypothesis ("" = none)
  std::vector<std::string> constraints;  ///< phrases every hypothesis contains (beam search)
};

struct TranslateRequest {
  std::vector<std::string> lines;
  JobOptions options;
  std::vector<LineGuide> guides;  ///< empty, or one per line
};

/// POST /v1/translate: {"text": ["...", ...] or "...", "prefix": like "text" (optional; ""
/// for none), "constraints": one array of phrases per line (a flat array for a one-line
/// request; needs beam >= 2), "attention", and the search options requests may choose
/// (search_option_table.h: "beam", "nbest", "alpha", "coverage", "min_len")}.
/// Fields left out take `defaults`. Throws RequestError (400 bad shape, 413 over a limit).
TranslateRequest parse_translate_request(const std::string& body, const JobOptions& defaults,
                                         const RequestLimits& limits);

/// POST /translator/translate (OpenNMT-py's REST shape): [{"src": "...", "id": N}, ...].
/// `id` names a model in OpenNMT-py; this server has one and accepts any integer id.
/// Lines that are empty after trimming are kept (answered with "" as OpenNMT-py does).
TranslateRequest parse_opennmt_request(const std::string& body, const JobOptions& defaults,
                                       const RequestLimits& limits);

}  // namespace nmt::serve
