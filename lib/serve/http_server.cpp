#include "nmt/serve/http_server.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "httplib_include.h"
#include "nmt/serve/page.h"
#include "nmt/serve/responses.h"

namespace nmt::serve {
namespace {

const char* const kJson = "application/json";

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  // Hypothesis text is valid UTF-8 by construction; "replace" only guards the reply.
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kJson);
}

// Only SO_REUSEADDR: httplib's default may add SO_REUSEPORT, which would let a second
// server bind a port that is in use instead of failing.
void socket_options(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

std::string refusal(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "no such route; see docs/serve.md";
    case 405: return "method not allowed";
    case 413: return "request too large (--max-lines, --max-line-bytes)";
    case 414: return "URI too long";
    default: return "refused";
  }
}

}  // namespace

HttpServer::HttpServer(BatchQueue& queue, nlohmann::json model_info, ServerSettings settings)
    : queue_(queue),
      model_info_(std::move(model_info)),
      settings_(std::move(settings)),
      server_(std::make_unique<httplib::Server>()) {
  const auto threads = static_cast<size_t>(std::max(1, settings_.http_threads));
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_socket_options(socket_options);
  server_->set_payload_max_length(max_request_bytes(settings_.limits));
  server_->set_keep_alive_max_count(1000);
  server_->set_keep_alive_timeout(2);  // also how long an idle connection delays shutdown
  add_routes();
}

HttpServer::~HttpServer() = default;

void HttpServer::bind() {
  errno = 0;
  const auto& host = settings_.host;
  port_ = settings_.port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, settings_.port) ? settings_.port : -1);
  if (port_ <= 0) {
    const std::string reason = errno != 0 ? std::strerror(errno) : "unknown host or address not available";
    throw Error("cannot listen on " + host + ":" + std::to_string(settings_.port) + ": " + reason);
  }
}

void HttpServer::serve() {
  // served_ is set however serve() ends: stop() waits for it.
  struct MarkServed {
    std::atomic<bool>& served;
    ~MarkServed() { served = true; }
  } mark{served_};
  if (stop_requested_) return;
  errno = 0;
  const bool stopped_cleanly = server_->listen_after_bind();  // false: accept() failed
  if (!stopped_cleanly && !stop_requested_)
    throw Error("stopped accepting connections on " + settings_.host + ":" + std::to_string(port_) + ": " +
                (errno != 0 ? std::strerror(errno) : "accept failed"));
}

void HttpServer::stop() {
  stop_requested_ = true;
  // httplib ignores stop() until listening has begun, so repeat until serve() is done.
  while (!served_) {
    server_->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void HttpServer::add_routes() {
  server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(translate_page("nmt-serve"), "text/html; charset=utf-8");
  });
  auto health = [this](const httplib::Request&, httplib::Response& res) {
    const auto stats = queue_.stats();
    send_json(res, 200, {{"status", "ok"}, {"batches", stats.batches}, {"requests", stats.jobs}, {"lines", stats.lines}});
  };
  server_->Get("/health", health);
  server_->Get("/translator/health", health);
  server_->Get("/v1/model", [this](const httplib::Request&, httplib::Response& res) {
    auto info = model_info_;
    const auto& d = settings_.defaults;
    info["server"] = {{"beam", d.beam}, {"nbest", d.nbest}, {"alpha", d.alpha},
                      {"max_lines", settings_.limits.max_lines}, {"max_line_bytes", settings_.limits.max_line_bytes},
                      {"max_beam", settings_.limits.max_beam}};
    send_json(res, 200, info);
  });
  add_translate_route("/v1/translate", false);
  add_translate_route("/translator/translate", true);
  // httplib's own refusals (404, 413 payload, bad request line) get a JSON body too.
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    send_json(res, res.status,
              error_body("HTTP " + std::to_string(res.status) + " for " + req.method + " " + req.path + ": " + refusal(res.status)));
  });
  server_->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_json(res, 500, error_body(what));
  });
}

void HttpServer::add_translate_route(const std::string& path, bool opennmt) {
  server_->Post(path, [this, opennmt](const httplib::Request& req, httplib::Response& res) {
    try {
      const auto request = opennmt ? parse_opennmt_request(req.body, settings_.defaults, settings_.limits)
                                   : parse_translate_request(req.body, settings_.defaults, settings_.limits);
      auto results = queue_.submit(request.lines, request.options).get();
      send_json(res, 200, opennmt ? opennmt_response(request.lines, results, request.options.nbest)
                                  : translate_response(results, request.options));
    } catch (const RequestError& e) {
      send_json(res, e.status(), error_body(e.what()));
    } catch (const c10::Error& e) {
      send_json(res, 500, error_body(e.what_without_backtrace()));
    } catch (const std::exception& e) {
      send_json(res, 500, error_body(e.what()));
    }
  });
}

}  // namespace nmt::serve
