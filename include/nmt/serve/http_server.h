#pragma once
// The HTTP side of nmt-serve: its listening socket, its connections (http_connections.h:
// Boost.Beast on one thread, with deadlines and per-client limits, so slow clients cannot
// take the server) and its routes (routes.h). A request to translate is parsed and queued
// on the connection thread and answered from the BatchQueue's worker: no thread waits.
#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "nmt/serve/batch_queue.h"
#include "nmt/serve/http_connections.h"
#include "nmt/serve/request.h"
#include "nmt/serve/routes.h"

namespace nmt::serve {

struct ServerSettings {
  std::string host = "127.0.0.1";
  int port = 8080;         ///< 0 = any free one (see port())
  int max_connections = 1024;       ///< open connections, all clients together
  int max_client_connections = 256;  ///< open connections from one client address (a reverse proxy is one)
  double request_timeout_s = 30;    ///< a request's head and body, from its first byte; an answer's sending
  double idle_timeout_s = 5;        ///< a keep-alive connection between requests
  JobOptions defaults;     ///< for fields a request leaves out, and all of /translator/translate
  RequestLimits limits;
};

class HttpServer {
 public:
  /// `model_info` is GET /v1/model's body (computed once, before the worker starts).
  HttpServer(BatchQueue& queue, nlohmann::json model_info, ServerSettings settings);
  ~HttpServer();

  /// Binds the listening socket. Throws nmt::Error naming host, port and the reason.
  void bind();
  /// The bound port (the chosen one when settings.port was 0).
  int port() const { return port_; }
  /// The connection limit in force (--max-connections, capped by the open-file limit).
  int max_connections() const { return connections_.max_connections(); }
  /// Serves until stop(); requests received in full are answered before it returns.
  /// Throws nmt::Error if accepting connections fails for good.
  void serve();
  /// Stops accepting (the listening socket is closed at once) and returns once serve()
  /// has returned (requests received in full answered, other connections closed). From
  /// another thread, while or before serve() runs: it waits for serve() to finish.
  void stop();

 private:
  ServerSettings settings_;
  Routes routes_;
  HttpConnections connections_;
  int listening_ = -1;
  int port_ = 0;
  std::mutex served_mutex_;
  std::condition_variable served_changed_;
  bool served_ = false;
};

}  // namespace nmt::serve
