#pragma once
// Reads one HTTP/1.x request from the bytes a connection has received so far, called again
// as more arrive (without re-reading what it has already looked at, so a client sending one
// byte at a time costs linear work). Bodies: Content-Length or chunked. Anything the
// server will not take is refused with the status to answer: a head over its limit (431),
// a target over 8 KiB (414), a body over its limit (413, known from Content-Length before
// the body is read), a malformed head or chunk (400), a transfer coding other than chunked
// (501), a version other than HTTP/1.x (505). Both Content-Length and Transfer-Encoding
// in one request is refused (400): the two framings disagreeing is how requests get smuggled.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "nmt/serve/http_message.h"

namespace nmt::serve {

struct HttpLimits {
  size_t max_head_bytes = 16 * 1024;
  size_t max_target_bytes = 8 * 1024;
  size_t max_body_bytes = 1024 * 1024;
};

class HttpRequestParser {
 public:
  enum class State { incomplete, complete, refused };

  explicit HttpRequestParser(HttpLimits limits) : limits_(limits) {}

  /// Looks at `received` (every byte since the previous request ended, the same prefix at
  /// each call, longer each time). complete: request() and consumed() are valid;
  /// refused: refusal_status() and refusal() say why.
  State parse(std::string_view received);

  /// The head is in and asks "Expect: 100-continue" for a body that is not here yet: the
  /// client waits for an interim "100 Continue" before sending it.
  bool awaits_continue() const { return head_done_ && expects_continue_ && body_pending_; }
  /// Whether any byte of a request has arrived (leading empty lines do not count).
  bool started() const { return started_; }

  HttpRequest& request() { return request_; }
  size_t consumed() const { return consumed_; }
  int refusal_status() const { return refusal_status_; }
  const std::string& refusal() const { return refusal_; }

 private:
  State refuse(int status, std::string why);
  State parse_head_line(std::string_view line);
  State finish_head();
  State parse_body(std::string_view received);
  State parse_chunks(std::string_view received);

  HttpLimits limits_;
  HttpRequest request_;
  bool started_ = false;
  bool request_line_done_ = false;
  bool head_done_ = false;
  bool expects_continue_ = false;
  bool body_pending_ = false;
  bool chunked_ = false;
  bool in_trailers_ = false;
  size_t line_start_ = 0;   // where the head line being read starts
  size_t head_end_ = 0;     // bytes of the head, once done
  size_t content_length_ = 0;
  size_t chunk_cursor_ = 0;  // chunked: where the next chunk-size line (or trailer) starts
  size_t consumed_ = 0;
  int refusal_status_ = 0;
  std::string refusal_;
  State state_ = State::incomplete;
};

}  // namespace nmt::serve
