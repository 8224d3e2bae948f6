#pragma once
// nmt-serve's routes: which request gets which answer (docs/serve.md). Pages and errors are
// answered at once; a translation is queued, and answered from the batch worker when its
// batch is done. Free of LibTorch and of the HTTP library: HttpConnections (or the fuzz
// target, tests/fuzz/fuzz_serve_request.cpp) hands requests in.
#include <nlohmann/json.hpp>

#include "nmt/serve/batch_queue.h"
#include "nmt/serve/http_connections.h"
#include "nmt/serve/request.h"

namespace nmt::serve {

class Routes {
 public:
  /// `model_info` is GET /v1/model's body (computed once, before the worker starts);
  /// `defaults` fill what a request leaves out; `limits` bound what it may ask.
  Routes(BatchQueue& queue, nlohmann::json model_info, JobOptions defaults, RequestLimits limits);

  /// Answers `request` through `respond`: at once, or from the batch worker.
  void answer(const HttpRequest& request, const Responder& respond);
  /// The JSON answer to a request the connections refuse: {"error": "HTTP 413: ...", ...}.
  HttpResponse refusal(const Refusal& refusal) const;

 private:
  void translate(const HttpRequest& request, bool opennmt, const Responder& respond);
  HttpResponse health() const;
  HttpResponse model() const;

  BatchQueue& queue_;
  nlohmann::json model_info_;
  JobOptions defaults_;
  RequestLimits limits_;
};

/// A JSON response with `status`.
HttpResponse json_response(int status, const nlohmann::json& body);

}  // namespace nmt::serve
