#pragma once
// The HTTP side of nmt-serve, on Debian's cpp-httplib: routes, JSON errors, limits.
// Handlers run on httplib's thread pool and only parse, queue and wait; translation
// happens on the BatchQueue's single worker.
#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <string>

#include "nmt/serve/batch_queue.h"
#include "nmt/serve/request.h"

namespace httplib {
class Server;
}

namespace nmt::serve {

struct ServerSettings {
  std::string host = "127.0.0.1";
  int port = 8080;         ///< 0 = any free port (see port())
  int http_threads = 64;   ///< connections served at once (each waits while its job is queued)
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
  /// Serves until stop(); requests in flight are answered before it returns.
  void serve();
  /// Stops accepting and returns once serve() has returned (requests in flight answered,
  /// idle keep-alive connections closed within their 2 s timeout). From another thread,
  /// while or just before serve() runs: it waits for serve() to finish.
  void stop();

 private:
  void add_routes();
  void add_translate_route(const std::string& path, bool opennmt);

  BatchQueue& queue_;
  nlohmann::json model_info_;
  ServerSettings settings_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> served_{false};
};

}  // namespace nmt::serve
