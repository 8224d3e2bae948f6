// Requests as the server reads them (Boost.Beast's parser with the server's limits and
// checks): pieces, both body framings, pipelining, keep-alive, and every refusal with its
// status, the smuggling attempts included.
#include "support/catch.h"

#include <string>
#include <utility>
#include <vector>

#include "nmt/serve/http_wire.h"

using nmt::serve::HttpLimits;
using nmt::serve::wire::parse_request;

TEST_CASE("a request is read once it is whole, with its pieces in place", "[serve][http]") {
  const std::string wire = "GET /health?x=1 HTTP/1.1\r\nHost: here\r\nX-Custom:  spaced value \r\n\r\n";
  for (size_t n = 0; n < wire.size(); ++n) {
    INFO(n);
    const auto partial = parse_request(wire.substr(0, n), HttpLimits{});
    CHECK((!partial.request && !partial.refusal));
  }
  const auto parsed = parse_request(wire, HttpLimits{});
  REQUIRE(parsed.request);
  const auto& request = *parsed.request;
  CHECK(request.method == "GET");
  CHECK(request.target == "/health?x=1");
  CHECK(request.path() == "/health");
  REQUIRE(request.header("x-custom") != nullptr);
  CHECK(*request.header("x-custom") == "spaced value");
  CHECK(request.header("X-Custom") == nullptr);  // names are kept in lower case
  CHECK(parsed.consumed == wire.size());
  CHECK(parsed.keep_alive);
}

TEST_CASE("a Content-Length body is read whole, and a pipelined request is left over", "[serve][http]") {
  const std::string first = "POST /v1/translate HTTP/1.1\r\nContent-Length: 11\r\n\r\n{\"text\": 1}";
  const std::string wire = first + "GET / HTTP/1.1\r\n\r\n";
  CHECK(!parse_request(first.substr(0, first.size() - 1), HttpLimits{}).request);
  const auto parsed = parse_request(wire, HttpLimits{});
  REQUIRE(parsed.request);
  CHECK(parsed.request->body == "{\"text\": 1}");
  CHECK(parsed.consumed == first.size());
}

TEST_CASE("a chunked body is de-chunked, extensions and trailers ignored", "[serve][http]") {
  const std::string wire =
      "POST /v1/translate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n";
  const auto parsed = parse_request(wire, HttpLimits{});
  REQUIRE(parsed.request);
  CHECK(parsed.request->body == "hello, world");
  CHECK(parsed.consumed == wire.size());
}

TEST_CASE("keep-alive follows the version and the Connection header", "[serve][http]") {
  auto keeps = [](const std::string& wire) {
    const auto parsed = parse_request(wire, HttpLimits{});
    REQUIRE(parsed.request);
    return parsed.keep_alive;
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
      {chunked + "40\r\n" + std::string(64, 'a') + "\r\n40\r\n", 413},
      {"GET / HTTP/1.1\r\nX: " + std::string(300, 'a'), 431},
      {"GET /" + std::string(70, 'a') + " HTTP/1.1\r\n\r\n", 414},
      // Framing that two readers could take differently (request smuggling).
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 501},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400},
      // A bare CR, a NUL or another control character in a head.
      {"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nX: a" + std::string(1, '\0') + "b\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", 400},
      {"GET / HTTP/1.1\rX: a\r\n\r\n", 400},
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"GET /\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400},
      {chunked + "zz\r\n", 400},
      {chunked + "2\r\nabc\r\n0\r\n\r\n", 400},
  };
  for (const auto& [wire, status] : cases) {
    INFO(wire);
    const auto parsed = parse_request(wire, small);
    CHECK(!parsed.request);
    REQUIRE(parsed.refusal);
    CHECK(parsed.refusal->status == status);
    CHECK(!parsed.refusal->why.empty());
  }
}

TEST_CASE("chunk framing is bounded however it is spread", "[serve][http]") {
  HttpLimits limits;
  // 1-byte chunks, each with a 1 KB extension: legal, read in bounded memory, and the body
  // is what counts against the body limit.
  std::string wire = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string extension = ";e=" + std::string(1000, 'x');
  for (int i = 0; i < 200; ++i) wire += "1" + extension + "\r\na\r\n";
  wire += "0\r\n\r\n";
  const auto parsed = parse_request(wire, limits);
  REQUIRE(parsed.request);
  CHECK(parsed.request->body == std::string(200, 'a'));
  // One chunk line longer than the head limit is refused, not buffered.
  const auto long_line = parse_request("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;e=" +
                                           std::string(limits.max_head_bytes + 20 * 1024, 'x'),
                                       limits);
  REQUIRE(long_line.refusal);
  CHECK(long_line.refusal->status == 400);
}
