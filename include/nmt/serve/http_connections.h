#pragma once
// nmt-serve's connections, on Boost.Asio and Boost.Beast: one thread (the caller of run())
// accepts them, reads every request head and body, and writes every answer, all without
// blocking. Beast parses and frames (http_wire.h); what is ours is the session around it
// (http_session.h): its deadlines, 100-continue, pipelining, refusals, and the limits on
// connections. So a client cannot hold a thread by sending or reading slowly: what it holds
// is one connection, and connections are limited per client address and in all, and given
// deadlines:
//  - a request's head and body must arrive within request_timeout of its first byte
//    (else 408 and close), an answer must be taken within request_timeout (else close);
//  - a connection idle between requests is closed after idle_timeout;
//  - a client address with max_per_client connections open gets 503 on the next;
//  - at max_connections (capped by the open-file limit) a new connection is still
//    accepted at once: the connection idle (or receiving) for the longest is closed to
//    make room, or, when every connection is being answered, the new one gets 503. A
//    new client never waits in the kernel's backlog;
//  - while a request is answered, a client that closes its connection is noticed, and its
//    request's queued translation dropped (HttpRequest::origin).
// A request waits for its answer without holding a thread: the handler gets a Responder
// and calls it when the answer is ready, from any thread.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "nmt/serve/http_message.h"

namespace nmt::serve {

struct ConnectionLimits {
  int max_connections = 1024;
  int max_per_client = 256;
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds idle_timeout{5000};
  HttpLimits http;
};

/// Hands a request's answer back to its connection: call it once, from any thread. The
/// connection is kept (and the server does not finish stopping) until it is called.
using Responder = std::function<void(HttpResponse)>;

struct RequestHandlers {
  /// Called on the connection thread with each complete request; must not block (queue
  /// slow work and call `respond` when it is done).
  std::function<void(HttpRequest request, Responder respond)> answer;
  /// The answer that refuses a request (malformed, too large, too slow, too many connections).
  std::function<HttpResponse(const Refusal&)> refusal;
};

class HttpSession;

class HttpConnections {
 public:
  HttpConnections(ConnectionLimits limits, RequestHandlers handlers);
  ~HttpConnections();
  HttpConnections(const HttpConnections&) = delete;
  HttpConnections& operator=(const HttpConnections&) = delete;

  /// Serves the listening socket `listening` (named `name` in errors; closed when this
  /// returns, or at once when stop is requested) until request_stop(): then accepts no
  /// more (the listening socket is closed, so a new client is refused, not left waiting),
  /// closes connections that have no complete request, answers the requests received in
  /// full, and returns. Throws nmt::Error when accepting fails in a way that is not
  /// temporary. Call it once.
  void run(int listening, const std::string& name);
  /// Any thread, any time (also before run(), which then closes `listening` and returns).
  void request_stop();

  /// The connection limit in force (max_connections capped by the open-file limit).
  int max_connections() const;

 private:
  friend class HttpSession;  // one of its connections (lib/serve/http_session.h)
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt::serve
