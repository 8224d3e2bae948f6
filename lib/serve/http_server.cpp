#include "nmt/serve/http_server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nmt/base/error.h"

namespace nmt::serve {
namespace {

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

RequestHandlers handlers(Routes& routes) {
  return {[&routes](HttpRequest request, Responder respond) { routes.answer(request, respond); },
          [&routes](const Refusal& refusal) { return routes.refusal(refusal); }};
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
    : settings_(std::move(settings)),
      routes_(queue, std::move(model_info), settings_.defaults, settings_.limits),
      connections_(connection_limits(settings_), handlers(routes_)) {}

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
  const int listening = listening_;
  listening_ = -1;  // the connections own it now, and close it when stopping
  connections_.run(listening, settings_.host + ":" + std::to_string(port_));
}

void HttpServer::stop() {
  connections_.request_stop();
  std::unique_lock<std::mutex> lock(served_mutex_);
  served_changed_.wait(lock, [this] { return served_; });
}

}  // namespace nmt::serve
