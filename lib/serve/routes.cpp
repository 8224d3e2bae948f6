#include "nmt/serve/routes.h"

#include "page.h"
#include "responses.h"

namespace nmt::serve {
namespace {

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, error_body(message));
}

bool is_page_route(const std::string& path) {
  return path == "/" || path == "/health" || path == "/translator/health" || path == "/v1/model";
}

bool is_translate_route(const std::string& path) { return path == "/v1/translate" || path == "/translator/translate"; }

}  // namespace

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse response;
  response.status = status;
  // Hypothesis text is valid UTF-8 by construction; "replace" only guards the reply.
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  response.content_type = "application/json";
  return response;
}

Routes::Routes(BatchQueue& queue, nlohmann::json model_info, JobOptions defaults, RequestLimits limits)
    : queue_(queue), model_info_(std::move(model_info)), defaults_(defaults), limits_(limits) {}

HttpResponse Routes::refusal(const Refusal& refusal) const {
  const bool too_large = refusal.status == 413 && refusal.why.find("body") != std::string::npos;
  return error_response(refusal.status, "HTTP " + std::to_string(refusal.status) + ": " + refusal.why +
                                            (too_large ? " (--max-lines, --max-line-bytes)" : ""));
}

void Routes::answer(const HttpRequest& request, const Responder& respond) {
  const auto path = request.path();
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (is_page_route(path) && get) {
    if (path == "/") {
      HttpResponse page;
      page.body = translate_page("nmt-serve");
      page.content_type = "text/html; charset=utf-8";
      return respond(page);
    }
    return respond(path == "/v1/model" ? model() : health());
  }
  if (is_translate_route(path) && request.method == "POST")
    return translate(request, path == "/translator/translate", respond);
  if (is_page_route(path) || is_translate_route(path)) {
    auto refused = error_response(405, "HTTP 405: " + request.method + " " + path + ": method not allowed");
    refused.headers.emplace_back("Allow", is_page_route(path) ? "GET, HEAD" : "POST");
    return respond(refused);
  }
  respond(error_response(404, "HTTP 404: " + request.method + " " + path + ": no such route; see docs/serve.md"));
}

HttpResponse Routes::health() const {
  const auto stats = queue_.stats();
  return json_response(200, {{"status", "ok"}, {"batches", stats.batches}, {"requests", stats.jobs}, {"lines", stats.lines},
                             {"abandoned", stats.abandoned}});
}

HttpResponse Routes::model() const {
  auto info = model_info_;
  info["server"] = search_options_json(defaults_.search, SearchOptionUse::request);
  info["server"].update(nlohmann::json{{"max_lines", limits_.max_lines},
                                       {"max_line_bytes", limits_.max_line_bytes},
                                       {"max_beam", limits_.max_beam},
                                       {"max_beam_lines", limits_.max_beam_lines},
                                       {"max_attention_hypotheses", limits_.max_attention_hypotheses}});
  return json_response(200, info);
}

void Routes::translate(const HttpRequest& request, bool opennmt, const Responder& respond) {
  TranslateRequest parsed;
  try {
    parsed = opennmt ? parse_opennmt_request(request.body, defaults_, limits_)
                     : parse_translate_request(request.body, defaults_, limits_);
  } catch (const RequestError& e) {
    return respond(error_response(e.status(), e.what()));
  }
  const auto sources = opennmt ? parsed.lines : std::vector<std::string>{};
  const auto options = parsed.options;
  // Runs on the batch worker, once.
  auto done = [respond, opennmt, sources, options](std::vector<LineResult> results, std::exception_ptr error) {
    if (!error)
      return respond(json_response(200, opennmt ? opennmt_response(sources, results, options.search.nbest)
                                                : translate_response(results, options)));
    try {
      std::rethrow_exception(error);
    } catch (const RequestError& e) {
      respond(error_response(e.status(), e.what()));
    } catch (const std::exception& e) {
      respond(error_response(500, e.what()));
    } catch (...) {
      respond(error_response(500, "internal error"));
    }
  };
  try {
    queue_.submit(std::move(parsed.lines), options, std::move(parsed.guides), std::move(done), request.origin);
  } catch (const RequestError& e) {  // the server is stopping (503), the client has too much queued (429)
    respond(error_response(e.status(), e.what()));
  }
}

}  // namespace nmt::serve
