#pragma once
// Private to lib/serve/http_*.cpp: HttpConnections' state (http_connections.cpp: accepting
// within the limits, stopping) and one connection's exchange (http_session.cpp).
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "nmt/serve/http_connections.h"
#include "nmt/serve/http_wire.h"

namespace nmt::serve {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;

class HttpSession;

/// One attempt to send `response` (with "Connection: close"), without waiting: for a
/// client about to be closed, which gets no more of the server's time.
void send_without_waiting(tcp::socket& socket, const HttpResponse& response);

struct HttpConnections::Impl {
  Impl(ConnectionLimits limits, RequestHandlers handlers);
  ~Impl();

  void run(int listening, const std::string& name);
  void request_stop();

  // The rest runs on the connection thread only.
  void accept_next();
  void on_accept(const error_code& error, tcp::socket socket);
  void refuse_connection(tcp::socket& socket, const std::string& client, const std::string& why);
  void begin_stop();
  /// A session closed: its slot and its client's count are free again.
  void closed(HttpSession* session, const std::string& client);
  /// At max_connections: closes the connection idle or receiving for the longest, so that a
  /// new client is served at once and never waits in the kernel's backlog. False when every
  /// connection is being answered (the new one is then refused with 503).
  bool make_room();

  // First member, so destroyed last: pending handlers (and the sessions they hold) go
  // before the state they were given.
  net::io_context io_{1};
  ConnectionLimits limits_;
  RequestHandlers handlers_;
  int max_connections_ = 1;
  tcp::acceptor acceptor_{io_};
  net::steady_timer accept_retry_{io_};
  std::string name_;
  std::atomic<bool> stop_requested_{false};
  bool stopping_ = false;
  bool accepting_ = false;      // an async_accept is pending
  bool retry_pending_ = false;  // accept_retry_ is waiting
  std::string accept_failure_;
  std::unordered_map<HttpSession*, std::shared_ptr<HttpSession>> sessions_;
  std::unordered_map<std::string, int> per_client_;
  uint64_t connections_opened_ = 0;  // numbers the connections (RequestOrigin::connection)
  int64_t evicted_ = 0;              // connections closed by make_room()
};

/// One connection: reads a request (its first byte within idle_timeout, then the whole of
/// it within request_timeout), hands it to the handler, writes the answer, and again while
/// the client keeps the connection (pipelined requests wait in the read buffer).
/// While a request is being answered, the connection watches for its client leaving (end
/// of stream or a reset, as nginx does): then it closes, and the request's queued
/// translation is dropped (RequestOrigin::closed).
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, std::string client, uint64_t number, HttpConnections::Impl& owner);
  void start();
  /// The server is stopping: a connection without a complete request closes now, one
  /// being answered closes after its answer.
  void stop();
  /// Whether make_room() may close it: it waits for a request (idle between requests, or a
  /// request still arriving) or drains after a refusal; it owes no answer.
  bool evictable() const;
  /// When it entered its present phase.
  std::chrono::steady_clock::time_point phase_since() const { return phase_since_; }
  /// Closed by make_room(): a request still arriving gets one attempt at a 503 first.
  void evict();

 private:
  enum class Phase { idle, receiving, answering, sending, lingering, closed };

  void enter(Phase phase);
  void watch_for_departure();

  void await_request();
  void begin_request();
  void on_head(const error_code& error);
  void read_body();
  void on_body(const error_code& error);
  void on_read_error(const error_code& error, bool head_done);
  void dispatch();
  void send(const HttpResponse& response);
  void on_sent(const error_code& error);
  void refuse(const Refusal& refusal);
  void linger();
  void drop_input();
  void set_deadline(std::chrono::steady_clock::duration after);
  void on_deadline();
  void close();

  tcp::socket socket_;
  std::string client_;
  uint64_t number_;
  std::shared_ptr<std::atomic<bool>> closed_flag_ = std::make_shared<std::atomic<bool>>(false);
  std::chrono::steady_clock::time_point phase_since_ = std::chrono::steady_clock::now();
  HttpConnections::Impl& owner_;
  net::steady_timer deadline_;
  boost::beast::flat_buffer buffer_;
  std::optional<wire::RequestParser> parser_;
  std::optional<wire::ResponseMessage> out_;
  Phase phase_ = Phase::idle;
  unsigned minor_version_ = 1;
  bool keep_alive_ = false;
  bool head_only_ = false;
  bool close_after_ = false;
  bool refused_ = false;
};

}  // namespace nmt::serve
