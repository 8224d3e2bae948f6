#pragma once
// The HTTP side of nmt-serve: its listening socket, routes and JSON errors. Connections
// are read and written by one thread (connection_loop.h: deadlines and per-client limits,
// so slow clients cannot take the server); requests to translate are parsed, queued and
// waited for on the HTTP worker threads; translation happens on the BatchQueue's worker.
#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "nmt/serve/batch_queue.h"
#include "nmt/serve/connection_loop.h"
#include "nmt/serve/request.h"

namespace nmt::serve {

struct ServerSettings {
  std::string host = "127.0.0.1";
  int port = 8080;         ///< 0 = any free one (see port())
  int http_threads = 64;   ///< translation requests answered at once (each waits while its job is queued)
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
  int max_connections() const { return loop_.max_connections(); }
  /// Serves until stop(); requests received in full are answered before it returns.
  /// Throws nmt::Error if accepting connections fails for good.
  void serve();
  /// Stops accepting and returns once serve() has returned (requests received in full
  /// answered, other connections closed). From another thread, while or before serve()
  /// runs: it waits for serve() to finish.
  void stop();

 private:
  HttpResponse answer(HttpRequest& request);
  HttpResponse translate(const HttpRequest& request, bool opennmt);
  HttpResponse health() const;
  HttpResponse model() const;

  BatchQueue& queue_;
  nlohmann::json model_info_;
  ServerSettings settings_;
  ConnectionLoop loop_;
  int listening_ = -1;
  int port_ = 0;
  std::mutex served_mutex_;
  std::condition_variable served_changed_;
  bool served_ = false;
};

}  // namespace nmt::serve
