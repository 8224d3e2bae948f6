#include "nmt/serve/http_request_parser.h"

#include <cctype>
#include <limits>

namespace nmt::serve {
namespace {

constexpr size_t kMaxChunkSizeLine = 1024;

// RFC 9110's tchar: what a method or a header name may hold.
bool is_token(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos)) return false;
  }
  return true;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A number in `base` (10 or 16) filling all of `digits`; nullopt when empty, malformed or too big.
std::optional<size_t> parse_size(std::string_view digits, int base) {
  if (digits.empty()) return std::nullopt;
  size_t value = 0;
  for (const char c : digits) {
    const auto u = static_cast<unsigned char>(c);
    int digit = -1;
    if (std::isdigit(u)) digit = c - '0';
    else if (base == 16 && std::isxdigit(u)) digit = std::tolower(u) - 'a' + 10;
    if (digit < 0) return std::nullopt;
    if (value > (std::numeric_limits<size_t>::max() - static_cast<size_t>(digit)) / static_cast<size_t>(base))
      return std::nullopt;
    value = value * static_cast<size_t>(base) + static_cast<size_t>(digit);
  }
  return value;
}

std::string_view without_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

HttpRequestParser::State HttpRequestParser::refuse(int status, std::string why) {
  refusal_status_ = status;
  refusal_ = std::move(why);
  return state_ = State::refused;
}

HttpRequestParser::State HttpRequestParser::parse(std::string_view received) {
  if (state_ != State::incomplete) return state_;
  while (!head_done_) {
    const auto newline = received.find('\n', line_start_);
    if (newline == std::string_view::npos) {
      if (received.size() > line_start_) started_ = true;
      if (!request_line_done_ && received.size() - line_start_ > limits_.max_target_bytes + 32)
        return refuse(414, "the request line is longer than " + std::to_string(limits_.max_target_bytes) + " bytes");
      if (received.size() > limits_.max_head_bytes)
        return refuse(431, "the request head is longer than " + std::to_string(limits_.max_head_bytes) + " bytes");
      return state_;
    }
    const auto line = without_cr(received.substr(line_start_, newline - line_start_));
    line_start_ = newline + 1;
    if (line_start_ > limits_.max_head_bytes)
      return refuse(431, "the request head is longer than " + std::to_string(limits_.max_head_bytes) + " bytes");
    if (!request_line_done_ && line.empty()) continue;  // empty lines before a request are allowed
    started_ = true;
    if (line.empty()) {
      head_done_ = true;
      head_end_ = line_start_;
      if (finish_head() == State::refused) return state_;
      break;
    }
    if (parse_head_line(line) == State::refused) return state_;
  }
  return chunked_ ? parse_chunks(received) : parse_body(received);
}

HttpRequestParser::State HttpRequestParser::parse_head_line(std::string_view line) {
  if (request_line_done_) {
    if (line.front() == ' ' || line.front() == '\t') return refuse(400, "folded header lines are not accepted");
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
      return refuse(400, "malformed header line");
    request_.headers.emplace_back(lower(line.substr(0, colon)), std::string(trim(line.substr(colon + 1))));
    return state_;
  }
  request_line_done_ = true;
  const auto first_space = line.find(' ');
  const auto last_space = line.rfind(' ');
  if (first_space == std::string_view::npos || first_space == last_space)
    return refuse(400, "malformed request line");
  const auto method = line.substr(0, first_space);
  const auto target = line.substr(first_space + 1, last_space - first_space - 1);
  const auto version = line.substr(last_space + 1);
  if (!is_token(method) || target.empty() || target.find(' ') != std::string_view::npos)
    return refuse(400, "malformed request line");
  if (target.size() > limits_.max_target_bytes)
    return refuse(414, "the request target is longer than " + std::to_string(limits_.max_target_bytes) + " bytes");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) || !std::isdigit(static_cast<unsigned char>(version[7])))
    return refuse(400, "malformed request line");
  if (version[5] != '1') return refuse(505, "only HTTP/1.0 and HTTP/1.1 are served");
  request_.method = std::string(method);
  request_.target = std::string(target);
  request_.minor_version = version[7] - '0';
  return state_;
}

HttpRequestParser::State HttpRequestParser::finish_head() {
  const auto* transfer_encoding = request_.header("transfer-encoding");
  std::optional<size_t> length;
  for (const auto& [name, value] : request_.headers) {
    if (name != "content-length") continue;
    const auto parsed = parse_size(value, 10);
    if (!parsed || (length && *length != *parsed)) return refuse(400, "malformed or conflicting Content-Length");
    length = parsed;
  }
  if (transfer_encoding != nullptr) {
    if (length) return refuse(400, "both Content-Length and Transfer-Encoding: the body's length is ambiguous");
    if (lower(*transfer_encoding) != "chunked")
      return refuse(501, "Transfer-Encoding \"" + *transfer_encoding + "\" is not supported (only chunked)");
    chunked_ = true;
    body_pending_ = true;
    chunk_cursor_ = head_end_;
  } else if (length) {
    if (*length > limits_.max_body_bytes)
      return refuse(413, "the body (" + std::to_string(*length) + " bytes) is longer than " +
                             std::to_string(limits_.max_body_bytes) + " bytes");
    content_length_ = *length;
    body_pending_ = content_length_ > 0;
  }
  const auto* expect = request_.header("expect");
  expects_continue_ = expect != nullptr && lower(*expect) == "100-continue";
  return state_;
}

HttpRequestParser::State HttpRequestParser::parse_body(std::string_view received) {
  if (received.size() - head_end_ < content_length_) return state_;
  request_.body = std::string(received.substr(head_end_, content_length_));
  consumed_ = head_end_ + content_length_;
  body_pending_ = false;
  return state_ = State::complete;
}

HttpRequestParser::State HttpRequestParser::parse_chunks(std::string_view received) {
  while (true) {
    const auto newline = received.find('\n', chunk_cursor_);
    if (newline == std::string_view::npos) {
      if (received.size() - chunk_cursor_ > kMaxChunkSizeLine) return refuse(400, "malformed chunked body");
      return state_;
    }
    const auto line = without_cr(received.substr(chunk_cursor_, newline - chunk_cursor_));
    if (in_trailers_) {  // trailer fields are read and ignored
      chunk_cursor_ = newline + 1;
      if (chunk_cursor_ - head_end_ > limits_.max_body_bytes + limits_.max_head_bytes)
        return refuse(431, "the trailer fields are too long");
      if (!line.empty()) continue;
      consumed_ = chunk_cursor_;
      body_pending_ = false;
      return state_ = State::complete;
    }
    const auto size = parse_size(trim(line.substr(0, line.find(';'))), 16);
    if (!size) return refuse(400, "malformed chunk size in the chunked body");
    if (*size > limits_.max_body_bytes - request_.body.size())
      return refuse(413, "the chunked body is longer than " + std::to_string(limits_.max_body_bytes) + " bytes");
    if (*size == 0) {
      in_trailers_ = true;
      chunk_cursor_ = newline + 1;
      continue;
    }
    const size_t data = newline + 1, after = data + *size;
    if (received.size() < after + 1 || (received[after] == '\r' && received.size() < after + 2)) return state_;
    const size_t end_of_line = received[after] == '\r' ? after + 1 : after;
    if (received[end_of_line] != '\n') return refuse(400, "a chunk does not end where its size says");
    request_.body.append(received.substr(data, *size));
    chunk_cursor_ = end_of_line + 1;
  }
}

}  // namespace nmt::serve
