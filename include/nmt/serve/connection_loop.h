#pragma once
// nmt-serve's connections: one thread (the caller of run()) accepts them and reads every
// request head and body, and writes every answer, without blocking (epoll). Only a request
// received in full reaches a handler. So a client cannot hold a thread by sending slowly
// (slowloris) or by reading slowly: what it holds is one connection, and connections are
// limited per client address and in all, and given deadlines:
//  - a request's head and body must arrive within request_timeout of its first byte
//    (else 408 and close), an answer must be taken within request_timeout (else close);
//  - a connection idle between requests is closed after idle_timeout;
//  - a client address with max_per_client connections open gets 503 on the next;
//  - at max_connections (capped by the open-file limit) no more are accepted until one
//    closes (the kernel's backlog holds them).
// Cheap requests (is_cheap) are answered on this thread; the others on `workers` threads
// (a request waiting for its translation holds one).
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "nmt/serve/http_message.h"
#include "nmt/serve/http_request_parser.h"

namespace nmt::serve {

struct ConnectionLimits {
  int max_connections = 1024;
  int max_per_client = 256;
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds idle_timeout{5000};
  HttpLimits http;
};

struct RequestHandlers {
  /// Whether `answer` is quick enough for the connection thread (no model work).
  std::function<bool(const HttpRequest&)> is_cheap;
  /// The answer to a complete request; an exception becomes `refusal(500, what)`.
  std::function<HttpResponse(HttpRequest&)> answer;
  /// The answer that refuses a request (malformed, too large, too slow, too many connections).
  std::function<HttpResponse(int status, const std::string& why)> refusal;
};

class ConnectionLoop {
 public:
  ConnectionLoop(ConnectionLimits limits, RequestHandlers handlers, int workers);
  ~ConnectionLoop();
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  /// Serves the listening socket `listening` (named `name` in errors) until request_stop():
  /// then accepts no more, closes connections that have no complete request, answers the
  /// requests received in full, and returns. Throws nmt::Error when accept() fails in a way
  /// that is not temporary.
  void run(int listening, const std::string& name);
  /// Any thread, any time (also before run(), which then returns at once).
  void request_stop();

  /// The connection limit in force (max_connections capped by the open-file limit).
  int max_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt::serve
