// The HTTP request parser: requests arriving in pieces, both body framings, pipelining,
// and every refusal with its status.
#include "support/catch.h"

#include <string>
#include <utility>
#include <vector>

#include "nmt/serve/http_request_parser.h"

using nmt::serve::HttpLimits;
using nmt::serve::HttpRequestParser;
using State = HttpRequestParser::State;

namespace {

// Feeds `wire` one byte at a time; returns the state after the last byte, and checks that
// it was incomplete before.
State feed_bytewise(HttpRequestParser& parser, const std::string& wire) {
  for (size_t n = 1; n < wire.size(); ++n) {
    const auto state = parser.parse(std::string_view(wire).substr(0, n));
    if (state != State::incomplete) return state;
  }
  return parser.parse(wire);
}

}  // namespace

TEST_CASE("a request that arrives a byte at a time is read once it is whole", "[serve][http]") {
  const std::string wire = "\r\nGET /health?x=1 HTTP/1.1\r\nHost: here\r\nX-Custom:  spaced value \r\n\r\n";
  HttpRequestParser parser(HttpLimits{});
  REQUIRE(feed_bytewise(parser, wire) == State::complete);
  auto& request = parser.request();
  CHECK(request.method == "GET");
  CHECK(request.target == "/health?x=1");
  CHECK(request.path() == "/health");
  CHECK(request.minor_version == 1);
  REQUIRE(request.header("x-custom") != nullptr);
  CHECK(*request.header("x-custom") == "spaced value");
  CHECK(request.header("X-Custom") == nullptr);  // names are kept in lower case
  CHECK(parser.consumed() == wire.size());
  CHECK(request.keep_alive());
}

TEST_CASE("a Content-Length body is read whole, and a pipelined request is left over", "[serve][http]") {
  const std::string first = "POST /v1/translate HTTP/1.1\r\nContent-Length: 11\r\n\r\n{\"text\": 1}";
  const std::string wire = first + "GET / HTTP/1.1\r\n\r\n";
  HttpRequestParser parser(HttpLimits{});
  CHECK(parser.parse(std::string_view(wire).substr(0, first.size() - 1)) == State::incomplete);
  REQUIRE(parser.parse(wire) == State::complete);
  CHECK(parser.request().body == "{\"text\": 1}");
  CHECK(parser.consumed() == first.size());
}

TEST_CASE("a chunked body is de-chunked, extensions and trailers ignored", "[serve][http]") {
  const std::string wire =
      "POST /v1/translate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n";
  HttpRequestParser parser(HttpLimits{});
  REQUIRE(feed_bytewise(parser, wire) == State::complete);
  CHECK(parser.request().body == "hello, world");
  CHECK(parser.consumed() == wire.size());
}

TEST_CASE("Expect: 100-continue is awaited until the body comes", "[serve][http]") {
  const std::string head = "POST /v1/translate HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  HttpRequestParser parser(HttpLimits{});
  CHECK(!parser.awaits_continue());
  REQUIRE(parser.parse(head) == State::incomplete);
  CHECK(parser.awaits_continue());
  REQUIRE(parser.parse(head + "{}") == State::complete);
  CHECK(!parser.awaits_continue());
}

TEST_CASE("keep-alive follows the version and the Connection header", "[serve][http]") {
  auto keeps = [](const std::string& wire) {
    HttpRequestParser parser(HttpLimits{});
    REQUIRE(parser.parse(wire) == State::complete);
    return parser.request().keep_alive();
  };
  CHECK(keeps("GET / HTTP/1.1\r\n\r\n"));
  CHECK(!keeps("GET / HTTP/1.1\r\nConnection: Upgrade, close\r\n\r\n"));
  CHECK(!keeps("GET / HTTP/1.0\r\n\r\n"));
  CHECK(keeps("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
}

TEST_CASE("requests the server will not take are refused with the right status", "[serve][http]") {
  HttpLimits small;
  small.max_body_bytes = 100;
  small.max_head_bytes = 256;
  small.max_target_bytes = 64;
  const std::string chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::vector<std::pair<std::string, int>> cases = {
      // The body's size is refused from the head (or the chunk size), before the body is read.
      {"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", 413},
      {chunked + "65\r\n", 413},
      {"GET / HTTP/1.1\r\nX: " + std::string(300, 'a'), 431},
      {"GET /" + std::string(200, 'a'), 414},
      {"GET /" + std::string(70, 'a') + " HTTP/1.1\r\n", 414},
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"GET /\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400},
      {chunked + "zz\r\n", 400},
      {chunked + "2\r\nabc\r\n", 400},
  };
  for (const auto& [wire, status] : cases) {
    INFO(wire);
    HttpRequestParser parser(small);
    CHECK(parser.parse(wire) == State::refused);
    CHECK(parser.refusal_status() == status);
    CHECK(!parser.refusal().empty());
  }
}
