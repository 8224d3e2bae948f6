#pragma once
// Between the bytes of HTTP/1.x and HttpRequest/HttpResponse, through Boost.Beast's parser
// and serializer (fuzzed upstream, and here by tests/fuzz/fuzz_serve_request.cpp with the
// server's limits). Beast frames the message (Content-Length or chunked, duplicate or
// conflicting framing headers refused, bare CR and control characters in a head refused)
// and bounds the head and the body; what it lets through that the server refuses is
// checked in check_head, once the head is in.
#include <boost/beast/http.hpp>

#include <optional>
#include <string_view>

#include "nmt/serve/http_message.h"

namespace nmt::serve::wire {

namespace http = boost::beast::http;
using RequestParser = http::request_parser<http::string_body>;
using ResponseMessage = http::response<http::string_body>;

/// The head and body limits on a parser about to read one request.
void apply_limits(RequestParser& parser, const HttpLimits& limits);

/// What Beast accepts and the server does not, once the head is in: a target over its
/// limit (414), a version other than HTTP/1.0 or 1.1 (505), any transfer coding but
/// "chunked" alone (501: a body we cannot read is not guessed at).
std::optional<Refusal> check_head(const RequestParser& parser, const HttpLimits& limits);

/// Whether the head asks for "100 Continue" before it sends its body.
bool expects_continue(const RequestParser& parser);

/// The refusal that answers Beast's error `error` while reading a request (whose head was
/// complete or not), naming the limit where one was exceeded. `unparsed`: the bytes the
/// parser had not taken (a request line of another HTTP version is 505, not 400).
Refusal refusal_for(const boost::system::error_code& error, bool head_done, const HttpLimits& limits,
                    std::string_view unparsed);

/// The request as the routes see it (the body moved out of `message`).
HttpRequest to_request(http::request<http::string_body>&& message);

/// `response` for a client speaking HTTP/1.`minor_version`: Content-Type, Content-Length,
/// "Connection: keep-alive" or "close"; for a HEAD request the head alone.
ResponseMessage to_message(const HttpResponse& response, unsigned minor_version, bool keep_alive, bool head_only);

/// One request parsed from `bytes` as the server reads it from a connection: `request` when
/// it is whole, `refusal` when the server would refuse it, neither when `bytes` end first.
/// For the fuzz target and the tests; the server reads sockets through the same parser.
struct ParsedRequest {
  std::optional<HttpRequest> request;
  std::optional<Refusal> refusal;
  bool keep_alive = false;
  size_t consumed = 0;  ///< bytes of `bytes` the request took (the rest: a pipelined one)
};
ParsedRequest parse_request(std::string_view bytes, const HttpLimits& limits);

}  // namespace nmt::serve::wire
