#include "nmt/serve/http_server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nmt/serve/page.h"
#include "nmt/serve/responses.h"

namespace nmt::serve {
namespace {

const char* const kJson = "application/json";

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse response;
  response.status = status;
  // Hypothesis text is valid UTF-8 by construction; "replace" only guards the reply.
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  response.content_type = kJson;
  return response;
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, error_body(message));
}

bool is_page_route(const std::string& path) {
  return path == "/" || path == "/health" || path == "/translator/health" || path == "/v1/model";
}

bool is_translate_route(const std::string& path) { return path == "/v1/translate" || path == "/translator/translate"; }

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

ConnectionLimits connection_limits(const ServerSettings& settings) {
  ConnectionLimits limits;
  limits.max_connections = settings.max_connections;
  limits.max_per_client = settings.max_client_connections;
  limits.request_timeout = to_ms(settings.request_timeout_s);
  limits.idle_timeout = to_ms(settings.idle_timeout_s);
  limits.http.max_body_bytes = max_request_bytes(settings.limits);
  return limits;
}

// A listening TCP socket on the first of `host`'s addresses that binds, or -1 with errno set.
int listen_on(const addrinfo* addresses) {
  int error = EADDRNOTAVAIL;
  for (const auto* address = addresses; address != nullptr; address = address->ai_next) {
    const int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    // SO_REUSEADDR only: SO_REUSEPORT would let a second server bind a port in use.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, address->ai_addr, address->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) return fd;
    error = errno;
    ::close(fd);
  }
  errno = error;
  return -1;
}

int bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return -1;
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
}

}  // namespace

HttpServer::HttpServer(BatchQueue& queue, nlohmann::json model_info, ServerSettings settings)
    : queue_(queue),
      model_info_(std::move(model_info)),
      settings_(std::move(settings)),
      loop_(connection_limits(settings_),
            RequestHandlers{[](const HttpRequest& request) { return request.method != "POST"; },
                            [this](HttpRequest& request) { return answer(request); },
                            [this](int status, const std::string& why) {
                              const bool too_large = status == 413 && why.find("body") != std::string::npos;
                              return error_response(status, "HTTP " + std::to_string(status) + ": " + why +
                                                                (too_large ? " (--max-lines, --max-line-bytes)" : ""));
                            }},
            settings_.http_threads) {}

HttpServer::~HttpServer() {
  if (listening_ >= 0) ::close(listening_);
}

void HttpServer::bind() {
  const auto where = settings_.host + ":" + std::to_string(settings_.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const int looked_up = ::getaddrinfo(settings_.host.c_str(), std::to_string(settings_.port).c_str(), &hints, &addresses);
  if (looked_up != 0) throw Error("cannot listen on " + where + ": " + ::gai_strerror(looked_up));
  listening_ = listen_on(addresses);
  const int error = errno;
  ::freeaddrinfo(addresses);
  if (listening_ < 0) throw Error("cannot listen on " + where + ": " + std::strerror(error));
  port_ = bound_port(listening_);
}

void HttpServer::serve() {
  // served_ is set however serve() ends: stop() waits for it.
  struct MarkServed {
    HttpServer& server;
    ~MarkServed() {
      {
        std::lock_guard<std::mutex> lock(server.served_mutex_);
        server.served_ = true;
      }
      server.served_changed_.notify_all();
    }
  } mark{*this};
  if (listening_ < 0) throw Error("HttpServer::serve() called before bind()");
  loop_.run(listening_, settings_.host + ":" + std::to_string(port_));
}

void HttpServer::stop() {
  loop_.request_stop();
  std::unique_lock<std::mutex> lock(served_mutex_);
  served_changed_.wait(lock, [this] { return served_; });
}

HttpResponse HttpServer::answer(HttpRequest& request) {
  const auto path = request.path();
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (is_page_route(path) && get) {
    if (path == "/") {
      HttpResponse page;
      page.body = translate_page("nmt-serve");
      page.content_type = "text/html; charset=utf-8";
      return page;
    }
    return path == "/v1/model" ? model() : health();
  }
  if (is_translate_route(path) && request.method == "POST") return translate(request, path == "/translator/translate");
  if (is_page_route(path) || is_translate_route(path)) {
    auto refused = error_response(405, "HTTP 405: " + request.method + " " + path + ": method not allowed");
    refused.headers.emplace_back("Allow", is_page_route(path) ? "GET, HEAD" : "POST");
    return refused;
  }
  return error_response(404, "HTTP 404: " + request.method + " " + path + ": no such route; see docs/serve.md");
}

HttpResponse HttpServer::health() const {
  const auto stats = queue_.stats();
  return json_response(200, {{"status", "ok"}, {"batches", stats.batches}, {"requests", stats.jobs}, {"lines", stats.lines}});
}

HttpResponse HttpServer::model() const {
  auto info = model_info_;
  const auto& d = settings_.defaults;
  info["server"] = {{"beam", d.beam}, {"nbest", d.nbest}, {"alpha", d.alpha},
                    {"max_lines", settings_.limits.max_lines}, {"max_line_bytes", settings_.limits.max_line_bytes},
                    {"max_beam", settings_.limits.max_beam}};
  return json_response(200, info);
}

HttpResponse HttpServer::translate(const HttpRequest& request, bool opennmt) {
  try {
    const auto parsed = opennmt ? parse_opennmt_request(request.body, settings_.defaults, settings_.limits)
                                : parse_translate_request(request.body, settings_.defaults, settings_.limits);
    auto results = queue_.submit(parsed.lines, parsed.options, parsed.guides).get();
    return json_response(200, opennmt ? opennmt_response(parsed.lines, results, parsed.options.nbest)
                                      : translate_response(results, parsed.options));
  } catch (const RequestError& e) {
    return error_response(e.status(), e.what());
  } catch (const c10::Error& e) {
    return error_response(500, e.what_without_backtrace());
  }
}

}  // namespace nmt::serve
