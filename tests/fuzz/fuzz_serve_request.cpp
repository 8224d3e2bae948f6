// libFuzzer: nmt-serve's request handling on arbitrary bytes, as a connection delivers
// them: Boost.Beast's parser with the server's limits and checks (http_wire), then each
// complete request (pipelined ones too) through the routes, their request JSON and, for a
// translation, the batch queue and the answer's JSON. Every answer must be a valid HTTP
// status with a JSON body (the page aside), whatever the bytes.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <string>

#include "nmt/serve/http_wire.h"
#include "nmt/serve/routes.h"

namespace {

using namespace nmt::serve;

// Echoes each line (with its prefix) as its one hypothesis.
std::vector<LineResult> echo(const std::vector<std::string>& lines, const std::vector<LineGuide>& guides,
                             const std::vector<const AdmittedLine*>&, const JobOptions& options) {
  std::vector<LineResult> results;
  for (size_t i = 0; i < lines.size(); ++i) {
    LineResult result;
    for (int k = 0; k < options.search.nbest; ++k)
      result.hypotheses.push_back({guides[i].prefix + lines[i], -1.0 * k, -1.0 * k, {"</s>"}, nullptr});
    results.push_back(std::move(result));
  }
  return results;
}

struct Server {
  BatchQueue queue{BatchBackend{echo, [](const std::string& line, const LineGuide&) {
                                   return AdmittedLine{static_cast<int64_t>(line.size()) + 1, {}};
                                 }},
                   BatchSettings{4096, std::chrono::milliseconds(0)}};
  Routes routes{queue, nlohmann::json{{"family", "fuzz"}}, JobOptions{}, RequestLimits{}};
};

void check(const HttpResponse& response, bool json) {
  if (response.status < 200 || response.status > 599) __builtin_trap();
  if (json && nlohmann::json::parse(response.body, nullptr, false).is_discarded()) __builtin_trap();
  (void)wire::to_message(response, 1, true, false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server server;
  HttpLimits limits;
  limits.max_body_bytes = max_request_bytes(RequestLimits{});
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (int request = 0; request < 8 && !bytes.empty(); ++request) {
    const auto parsed = wire::parse_request(bytes, limits);
    if (parsed.refusal) {
      if (parsed.refusal->status < 400 || parsed.refusal->why.empty()) __builtin_trap();
      check(server.routes.refusal(*parsed.refusal), true);
      break;
    }
    if (!parsed.request) break;
    if (parsed.consumed == 0 || parsed.consumed > bytes.size()) __builtin_trap();
    std::promise<HttpResponse> answered;
    auto answer = answered.get_future();
    server.routes.answer(*parsed.request, [&answered](HttpResponse response) { answered.set_value(std::move(response)); });
    check(answer.get(), parsed.request->path() != "/");
    bytes.remove_prefix(parsed.consumed);
  }
  return 0;
}
