// One connection of HttpConnections (http_session.h). Beast reads and writes the messages;
// this file decides when: the deadlines, the interim 100 Continue, the refusals, keep-alive.
#include "http_session.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <sstream>

namespace nmt::serve {
namespace {

namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 16 * 1024;
// After refusing a request whose body may still be arriving, the connection reads and drops
// for this long before closing, so that the refusal is not lost to a reset.
constexpr auto kLinger = std::chrono::seconds(2);
constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";

bool client_left(const error_code& error) {
  return error == http::error::end_of_stream || error == http::error::partial_message || error == net::error::eof ||
         error == net::error::connection_reset || error == net::error::broken_pipe;
}

std::string seconds_text(std::chrono::milliseconds duration) {
  std::ostringstream text;
  text << duration.count() / 1000.0;
  return text.str();
}

// An answer waiting to be handed back from another thread. It holds the io_context's work
// (so run() does not return while an answer is owed) until the answer is on the connection
// thread, and the session only weakly: whatever thread drops the last copy of a Responder,
// nothing of the connection thread's is touched after that.
struct PendingAnswer {
  std::weak_ptr<HttpSession> session;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::atomic<bool> given{false};
};

}  // namespace

void send_without_waiting(tcp::socket& socket, const HttpResponse& response) {
  std::ostringstream bytes;
  bytes << wire::to_message(response, 1, false, false);
  const auto text = bytes.str();
  error_code ignored;
  socket.non_blocking(true, ignored);
  socket.send(net::buffer(text), 0, ignored);  // whatever fits in the socket's buffer
}

HttpSession::HttpSession(tcp::socket socket, std::string client, uint64_t number, HttpConnections::Impl& owner)
    : socket_(std::move(socket)),
      client_(std::move(client)),
      number_(number),
      owner_(owner),
      deadline_(owner.io_),
      // What the parser has not taken yet: a head (up to its limit), or a chunk line, plus
      // one read. Nothing a client sends makes it larger.
      buffer_(owner.limits_.http.max_head_bytes + kReadChunk) {}

void HttpSession::start() { await_request(); }

void HttpSession::stop() {
  if (phase_ == Phase::answering || phase_ == Phase::sending) close_after_ = true;
  else close();
}

bool HttpSession::evictable() const {
  return phase_ == Phase::idle || phase_ == Phase::receiving || phase_ == Phase::lingering;
}

void HttpSession::evict() {
  if (phase_ == Phase::receiving)
    send_without_waiting(socket_, owner_.handlers_.refusal(Refusal{
                                      503, "the server is at its connection limit (--max-connections) and this "
                                           "request was the slowest to arrive"}));
  close();
}

void HttpSession::enter(Phase phase) {
  phase_ = phase;
  phase_since_ = Clock::now();
}

// Readable while a request is answered: the client's end of stream or a reset (it left),
// or its next pipelined request (then watching stops: those bytes stay for the parser).
void HttpSession::watch_for_departure() {
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code error) {
    if (self->phase_ != Phase::answering || error) return;
    char byte;
    const ssize_t got = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return self->close();
    if (got < 0) self->watch_for_departure();  // woken for nothing
  });
}

void HttpSession::await_request() {
  if (buffer_.size() > 0) return begin_request();  // a pipelined request is already here
  if (buffer_.capacity() > 2 * kReadChunk) buffer_.shrink_to_fit();  // after a large head
  enter(Phase::idle);
  set_deadline(owner_.limits_.idle_timeout);
  socket_.async_read_some(buffer_.prepare(kReadChunk), [self = shared_from_this()](error_code error, size_t got) {
    if (self->phase_ != Phase::idle) return;
    if (error) return self->close();
    self->buffer_.commit(got);
    self->begin_request();
  });
}

void HttpSession::begin_request() {
  // The request's deadline counts from its first byte, which is in the buffer now.
  enter(Phase::receiving);
  set_deadline(owner_.limits_.request_timeout);
  parser_.emplace();
  wire::apply_limits(*parser_, owner_.limits_.http);
  http::async_read_header(socket_, buffer_, *parser_,
                          [self = shared_from_this()](error_code error, size_t) { self->on_head(error); });
}

void HttpSession::on_head(const error_code& error) {
  if (phase_ != Phase::receiving) return;
  if (error) return on_read_error(error, false);
  if (auto refusal = wire::check_head(*parser_, owner_.limits_.http)) return refuse(*refusal);
  if (parser_->is_done()) return dispatch();
  if (!wire::expects_continue(*parser_)) return read_body();
  // The client waits for this before it sends the body; the request's deadline runs on.
  net::async_write(socket_, net::buffer(kContinue, sizeof kContinue - 1),
                   [self = shared_from_this()](error_code error, size_t) {
                     if (self->phase_ != Phase::receiving) return;
                     if (error) return self->close();
                     self->read_body();
                   });
}

void HttpSession::read_body() {
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](error_code error, size_t) { self->on_body(error); });
}

void HttpSession::on_body(const error_code& error) {
  if (phase_ != Phase::receiving) return;
  if (error) return on_read_error(error, true);
  dispatch();
}

void HttpSession::on_read_error(const error_code& error, bool head_done) {
  if (client_left(error)) return close();
  const auto unparsed = buffer_.data();
  refuse(wire::refusal_for(error, head_done, owner_.limits_.http,
                           std::string_view(static_cast<const char*>(unparsed.data()), unparsed.size())));
}

void HttpSession::dispatch() {
  enter(Phase::answering);
  deadline_.cancel();  // however long the translation takes
  keep_alive_ = parser_->keep_alive();
  minor_version_ = parser_->get().version() % 10;
  head_only_ = parser_->get().method() == http::verb::head;
  auto request = wire::to_request(parser_->release());
  parser_.reset();
  request.origin = RequestOrigin{client_, number_, closed_flag_};
  // Pipelined bytes already read would hide the client's leaving; they are its next request.
  if (buffer_.size() == 0) watch_for_departure();
  auto pending = std::make_shared<PendingAnswer>();
  pending->session = weak_from_this();
  pending->work.emplace(owner_.io_.get_executor());
  auto* io = &owner_.io_;
  Responder respond = [pending, io](HttpResponse response) {
    if (pending->given.exchange(true)) return;  // once
    net::post(*io, [pending, response = std::move(response)] {
      pending->work.reset();
      if (auto session = pending->session.lock()) session->send(response);
    });
  };
  try {
    owner_.handlers_.answer(std::move(request), respond);
  } catch (const std::exception& e) {
    respond(owner_.handlers_.refusal(Refusal{500, e.what()}));
  } catch (...) {
    respond(owner_.handlers_.refusal(Refusal{500, "internal error"}));
  }
}

void HttpSession::send(const HttpResponse& response) {
  if (phase_ != Phase::answering) return;  // closed meanwhile (the server stopped, the client left)
  close_after_ = close_after_ || !keep_alive_ || owner_.stopping_;
  out_.emplace(wire::to_message(response, minor_version_, !close_after_, head_only_));
  enter(Phase::sending);
  set_deadline(owner_.limits_.request_timeout);
  http::async_write(socket_, *out_, [self = shared_from_this()](error_code error, size_t) { self->on_sent(error); });
}

void HttpSession::on_sent(const error_code& error) {
  if (phase_ != Phase::sending) return;
  out_.reset();
  if (error) return close();
  if (refused_) return linger();
  if (close_after_ || owner_.stopping_) return close();
  await_request();
}

void HttpSession::refuse(const Refusal& refusal) {
  parser_.reset();
  keep_alive_ = false;
  head_only_ = false;
  refused_ = true;
  minor_version_ = 1;
  enter(Phase::answering);
  send(owner_.handlers_.refusal(refusal));
}

void HttpSession::linger() {
  if (owner_.stopping_) return close();
  enter(Phase::lingering);
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  set_deadline(kLinger);
  buffer_.consume(buffer_.size());
  drop_input();
}

void HttpSession::drop_input() {
  socket_.async_read_some(buffer_.prepare(kReadChunk), [self = shared_from_this()](error_code error, size_t) {
    if (self->phase_ != Phase::lingering) return;
    if (error) return self->close();
    self->drop_input();  // not committed: dropped
  });
}

void HttpSession::set_deadline(std::chrono::steady_clock::duration after) {
  deadline_.expires_after(after);
  deadline_.async_wait([self = shared_from_this()](error_code error) {
    // A deadline moved or cancelled since this wait began is not this one.
    if (error || self->deadline_.expiry() > Clock::now()) return;
    self->on_deadline();
  });
}

void HttpSession::on_deadline() {
  if (phase_ == Phase::receiving) {
    // One attempt to say why: a client this slow gets no new deadline.
    send_without_waiting(socket_, owner_.handlers_.refusal(Refusal{
                                      408, "the request did not arrive within " +
                                               seconds_text(owner_.limits_.request_timeout) +
                                               " s of its first byte (--request-timeout)"}));
  }
  close();
}

void HttpSession::close() {
  if (phase_ == Phase::closed) return;
  auto self = shared_from_this();  // the owner may hold the last reference
  enter(Phase::closed);
  closed_flag_->store(true, std::memory_order_release);  // its queued translation, if any, is dropped
  error_code ignored;
  socket_.close(ignored);  // pending reads and writes complete with operation_aborted
  deadline_.cancel();
  owner_.closed(this, client_);
}

}  // namespace nmt::serve
