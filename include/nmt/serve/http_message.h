#pragma once
// An HTTP/1.x request as nmt-serve's routes see it, and the response they give back.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nmt::serve {

struct HttpRequest {
  std::string method;  ///< as sent ("GET", "POST", ...)
  std::string target;  ///< the request-target, e.g. "/v1/translate?x=1"
  int minor_version = 1;  ///< HTTP/1.<minor_version>
  std::vector<std::pair<std::string, std::string>> headers;  ///< names in lower case, in order
  std::string body;    ///< de-chunked

  /// The target up to '?'.
  std::string path() const;
  /// The first header of this (lower-case) name, or nullptr.
  const std::string* header(std::string_view name) const;
  /// Whether the client keeps the connection open after the answer: HTTP/1.1 unless it
  /// sent "Connection: close", HTTP/1.0 only with "Connection: keep-alive".
  bool keep_alive() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  /// Extra header lines, e.g. {"Allow", "GET, HEAD"}.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// "OK", "Not Found", ...; "Unknown" for a status not listed.
const char* reason_phrase(int status);

/// The bytes of `response` on the wire, with Content-Length and a Connection header
/// saying whether the server keeps the connection; no body when `head_only` (HEAD).
std::string serialize_response(const HttpResponse& response, bool keep_alive, bool head_only);

}  // namespace nmt::serve
