#include "nmt/serve/http_wire.h"

#include <boost/asio/buffer.hpp>

#include <cctype>

namespace nmt::serve::wire {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string_view view(boost::beast::string_view text) { return {text.data(), text.size()}; }

std::string kib(size_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

// Whether `unparsed` starts with a well-formed request line of another HTTP version (which
// Beast refuses as bad_version, as it does a malformed one).
bool other_version(std::string_view unparsed) {
  const auto end = unparsed.find("\r\n");
  if (end == std::string_view::npos) return false;
  const auto line = unparsed.substr(0, end);
  const auto space = line.rfind(' ');
  if (space == std::string_view::npos) return false;
  const auto version = line.substr(space + 1);
  return version.size() == 8 && version.substr(0, 5) == "HTTP/" && std::isdigit(static_cast<unsigned char>(version[5])) &&
         version[6] == '.' && std::isdigit(static_cast<unsigned char>(version[7]));
}

}  // namespace

void apply_limits(RequestParser& parser, const HttpLimits& limits) {
  parser.header_limit(static_cast<std::uint32_t>(limits.max_head_bytes));
  parser.body_limit(limits.max_body_bytes);
}

std::optional<Refusal> check_head(const RequestParser& parser, const HttpLimits& limits) {
  const auto& head = parser.get();
  if (head.target().size() > limits.max_target_bytes)
    return Refusal{414, "request target longer than " + kib(limits.max_target_bytes)};
  if (head.version() != 10 && head.version() != 11)
    return Refusal{505, "HTTP/" + std::to_string(head.version() / 10) + "." + std::to_string(head.version() % 10) +
                            " is not supported (HTTP/1.0 and 1.1 are)"};
  // Beast reads a body as chunked when "chunked" ends the codings and refuses a second
  // header after it; any other coding (gzip, or "chunked" then "gzip" in one list) we
  // cannot decode, so it is refused rather than read as something else.
  for (const auto& field : head)
    if (field.name() == http::field::transfer_encoding && !equals_ignoring_case(view(field.value()), "chunked"))
      return Refusal{501, "transfer coding '" + std::string(view(field.value())) + "' is not supported (only chunked)"};
  return std::nullopt;
}

bool expects_continue(const RequestParser& parser) {
  const auto expect = parser.get()[http::field::expect];
  return parser.get().version() == 11 && equals_ignoring_case(view(expect), "100-continue") && !parser.is_done();
}

Refusal refusal_for(const boost::system::error_code& error, bool head_done, const HttpLimits& limits,
                    std::string_view unparsed) {
  if (error == http::error::header_limit)
    return Refusal{431, (head_done ? "chunk trailers larger than " : "request head larger than ") +
                            kib(limits.max_head_bytes)};
  if (error == http::error::body_limit) return Refusal{413, "request body larger than " + kib(limits.max_body_bytes)};
  // The read buffer holds what the parser has not taken yet; only a chunk line (or trailer)
  // longer than the head limit fills it.
  if (error == http::error::buffer_overflow)
    return Refusal{head_done ? 400 : 431, head_done ? "chunk line or trailer longer than " + kib(limits.max_head_bytes)
                                                    : "request head larger than " + kib(limits.max_head_bytes)};
  if (error == http::error::bad_version && other_version(unparsed))
    return Refusal{505, "only HTTP/1.0 and 1.1 are supported"};
  return Refusal{400, "malformed request (" + error.message() + ")"};
}

HttpRequest to_request(http::request<http::string_body>&& message) {
  HttpRequest request;
  request.method = std::string(view(message.method_string()));
  request.target = std::string(view(message.target()));
  for (const auto& field : message) {
    std::string name(view(field.name_string()));
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers.emplace_back(std::move(name), std::string(view(field.value())));
  }
  request.body = std::move(message.body());
  return request;
}

ResponseMessage to_message(const HttpResponse& response, unsigned minor_version, bool keep_alive, bool head_only) {
  ResponseMessage message{static_cast<http::status>(response.status), 10 + minor_version};
  message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message.insert(name, value);
  message.set(http::field::connection, keep_alive ? "keep-alive" : "close");
  // HEAD: the length the body would have, and no body.
  if (!head_only) message.body() = response.body;
  message.content_length(response.body.size());
  return message;
}

ParsedRequest parse_request(std::string_view bytes, const HttpLimits& limits) {
  ParsedRequest parsed;
  RequestParser parser;
  apply_limits(parser, limits);
  parser.eager(true);
  // Beast's parser takes at most what one buffer holds; the server's buffer holds the head
  // limit and a read's worth beyond it (http_session.cpp), so the fuzz target sees the same.
  const size_t window = limits.max_head_bytes + 16 * 1024;
  bool head_checked = false;
  while (!parser.is_done()) {
    boost::system::error_code error;
    const auto rest = bytes.substr(parsed.consumed);
    const auto used = parser.put(boost::asio::buffer(rest.data(), std::min(rest.size(), window)), error);
    parsed.consumed += used;
    if (error == http::error::need_more) {
      if (rest.size() >= window && used == 0) error = http::error::buffer_overflow;
      else if (used == 0 || parsed.consumed == bytes.size()) return parsed;
      else continue;
    }
    if (error) {
      parsed.refusal = refusal_for(error, parser.is_header_done(), limits, bytes.substr(parsed.consumed));
      return parsed;
    }
    if (parser.is_header_done() && !head_checked) {
      head_checked = true;
      if ((parsed.refusal = check_head(parser, limits))) return parsed;
    }
    if (used == 0 && !parser.is_done()) return parsed;
  }
  parsed.keep_alive = parser.keep_alive();
  parsed.request = to_request(parser.release());
  return parsed;
}

}  // namespace nmt::serve::wire
