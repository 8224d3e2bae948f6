#pragma once
// An HTTP/1.x request as nmt-serve's routes see it, the response they give back, and the
// sizes the server takes. The bytes on the wire are Boost.Beast's business (http_wire.h);
// these types keep the routes free of it.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nmt/serve/request_origin.h"

namespace nmt::serve {

struct HttpRequest {
  std::string method;  ///< as sent ("GET", "POST", ...)
  std::string target;  ///< the request-target, e.g. "/v1/translate?x=1"
  std::vector<std::pair<std::string, std::string>> headers;  ///< names in lower case, in order
  std::string body;    ///< de-chunked
  RequestOrigin origin;  ///< set by the connection it came from

  /// The target up to '?'.
  std::string path() const;
  /// The first header of this (lower-case) name, or nullptr.
  const std::string* header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  /// Extra header lines, e.g. {"Allow", "GET, HEAD"}.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// What one request may take. Anything larger is refused before it is read in full.
struct HttpLimits {
  size_t max_head_bytes = 16 * 1024;    ///< request line and headers (431); also a chunk line, trailers
  size_t max_target_bytes = 8 * 1024;   ///< the request-target (414)
  size_t max_body_bytes = 1024 * 1024;  ///< the body after de-chunking (413)
};

/// A request the server will not take: the status to answer and why.
struct Refusal {
  int status = 400;
  std::string why;
};

}  // namespace nmt::serve
