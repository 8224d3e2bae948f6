// Request checks: every bad input class is a RequestError with a 4xx status naming it.
#include "support/catch.h"

#include <limits>

#include "nmt/serve/request.h"

using namespace nmt::serve;

namespace {

int status_of(const std::string& body, bool opennmt = false) {
  RequestLimits limits;
  limits.max_lines = 3;
  limits.max_line_bytes = 20;
  try {
    if (opennmt) parse_opennmt_request(body, JobOptions{}, limits);
    else parse_translate_request(body, JobOptions{}, limits);
  } catch (const RequestError& e) {
    return e.status();
  }
  return 200;
}

}  // namespace

TEST_CASE("a good request keeps its lines and options", "[serve]") {
  JobOptions defaults;
  defaults.search.beam = 4;
  const auto r = parse_translate_request(R"({"text": ["eins", "zwei"], "nbest": 3, "attention": true})", defaults, {});
  CHECK(r.lines == std::vector<std::string>{"eins", "zwei"});
  CHECK(r.options.search.beam == 4);
  CHECK(r.options.search.nbest == 3);
  CHECK(r.options.attention);
  CHECK(r.options.search.alpha == defaults.search.alpha);
  CHECK(parse_translate_request(R"({"text": "eins", "beam": 1})", defaults, {}).options.search.nbest == 1);
  // Every option the table lets requests choose, and its bounds.
  const auto penalties = parse_translate_request(R"({"text": "eins", "coverage": 0.5, "min_len": 3})", defaults, {});
  CHECK(penalties.options.search.coverage == 0.5);
  CHECK(penalties.options.search.min_length == 3);
  CHECK(penalties.options != r.options);  // batched apart
  CHECK_THROWS_WITH(parse_translate_request(R"({"text": "eins", "min_len": -1})", defaults, {}),
                    HasSubstring("\"min_len\" must be at least 0, got -1"));
  CHECK_THROWS_WITH(parse_translate_request(R"({"text": "eins", "max_len_ratio": 3})", defaults, {}),
                    HasSubstring("unknown field \"max_len_ratio\""));
  const auto o = parse_opennmt_request(R"([{"src": "eins", "id": 100}, {"src": ""}])", defaults, {});
  CHECK(o.lines == std::vector<std::string>{"eins", ""});
}

TEST_CASE("bad requests are refused with a status naming the problem", "[serve]") {
  CHECK(status_of(R"({"text": ["ok"]})") == 200);
  CHECK(status_of(R"({"text": ["ok")") == 400);                    // malformed JSON
  CHECK(status_of("{\"text\": [\"bad \xff\"]}") == 400);            // invalid UTF-8
  CHECK(status_of(R"(["ok"])") == 400);                             // not an object
  CHECK(status_of(R"({"txt": ["ok"]})") == 400);                    // unknown field
  CHECK(status_of(R"({"beam": 2})") == 400);                        // no text
  CHECK(status_of(R"({"text": [1]})") == 400);                      // wrong type
  CHECK(status_of(R"({"text": {"a": 1}})") == 400);
  CHECK(status_of(R"({"text": []})") == 400);                       // empty
  CHECK(status_of(R"({"text": ["  "]})") == 400);                   // blank line
  CHECK(status_of(R"({"text": ["a\nb"]})") == 400);                 // two lines in one
  CHECK(status_of(R"({"text": ["a", "b", "c", "d"]})") == 413);     // too many lines
  CHECK(status_of(R"({"text": ["123456789012345678901"]})") == 413);  // too long a line
  CHECK(status_of(R"({"text": ["ok"], "beam": 0})") == 400);
  CHECK(status_of(R"({"text": ["ok"], "beam": 33})") == 400);
  CHECK(status_of(R"({"text": ["ok"], "beam": 2, "nbest": 3})") == 400);
  CHECK(status_of(R"({"text": ["ok"], "beam": "5"})") == 400);
  CHECK(status_of(R"({"text": ["ok"], "alpha": -1})") == 400);
  CHECK(status_of(R"({"text": ["ok"], "attention": 1})") == 400);
  CHECK(status_of(R"([{"src": "ok", "id": 1}])", true) == 200);
  CHECK(status_of(R"({"src": "ok"})", true) == 400);
  CHECK(status_of(R"([{"source": "ok"}])", true) == 400);
  CHECK(status_of(R"([{"src": 5}])", true) == 400);
  CHECK(status_of(R"([{"src": "ok", "id": "x"}])", true) == 400);
  CHECK(status_of(R"([])", true) == 400);
  CHECK_THROWS_WITH(parse_translate_request(R"({"text": ["ok", 2]})", {}, {}), HasSubstring("text[1]"));
}

TEST_CASE("the request size limit saturates instead of wrapping", "[serve]") {
  RequestLimits limits;
  CHECK(max_request_bytes(limits) == 64 * (1024 * 6 + 64) + 4096);
  limits.max_line_bytes = std::numeric_limits<size_t>::max() / 4;
  CHECK(max_request_bytes(limits) == std::numeric_limits<size_t>::max());
  limits.max_line_bytes = 1024;
  limits.max_lines = std::numeric_limits<size_t>::max() / 1000;
  CHECK(max_request_bytes(limits) == std::numeric_limits<size_t>::max());
}
