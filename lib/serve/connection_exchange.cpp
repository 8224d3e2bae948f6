// Part of ConnectionLoop (connection_loop_impl.h).
#include <sys/socket.h>
#include <unistd.h>

#include "connection_loop_impl.h"

namespace nmt::serve {

using namespace connection_detail;

void ConnectionLoop::Impl::read_from(uint64_t id, Connection& connection) {
  char buffer[kReadChunk];
  while (connection.phase == Phase::reading || connection.phase == Phase::lingering) {
    const auto got = ::recv(connection.fd, buffer, sizeof buffer, 0);
    if (got == 0) return close_connection(id);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return close_connection(id);
    }
    if (connection.phase == Phase::lingering) continue;
    connection.received.append(buffer, static_cast<size_t>(got));
    advance(id, connection);  // may answer, refuse or close: the loop's condition rechecks
    if (connections_.find(id) == connections_.end()) return;
  }
}

void ConnectionLoop::Impl::advance(uint64_t id, Connection& connection) {
  switch (connection.parser.parse(connection.received)) {
    case HttpRequestParser::State::incomplete:
      if (connection.parser.started() && !connection.request_timed) {
        connection.request_timed = true;
        connection.deadline = Clock::now() + limits_.request_timeout;
      }
      if (connection.parser.awaits_continue() && !connection.continue_sent) {
        connection.continue_sent = true;  // 25 bytes to a socket with nothing queued: sent whole
        [[maybe_unused]] const auto sent =
            ::send(connection.fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      return;
    case HttpRequestParser::State::refused:
      return refuse(id, connection, connection.parser.refusal_status(), connection.parser.refusal());
    case HttpRequestParser::State::complete:
      return dispatch(id, connection);
  }
}

void ConnectionLoop::Impl::dispatch(uint64_t id, Connection& connection) {
  auto request = std::move(connection.parser.request());
  connection.received.erase(0, connection.parser.consumed());
  connection.parser = HttpRequestParser(limits_.http);
  connection.keep_alive = request.keep_alive();
  connection.head_only = request.method == "HEAD";
  connection.phase = Phase::answering;
  rewatch(connection, id, 0);
  if (handlers_.is_cheap(request)) return respond(id, connection, safe_answer(request));
  pool_->post([this, id, request = std::move(request)]() mutable {
    Answer answer{id, safe_answer(request)};
    {
      std::lock_guard<std::mutex> lock(answers_mutex_);
      answers_.push_back(std::move(answer));
    }
    const uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_, &one, sizeof one);
  });
}

HttpResponse ConnectionLoop::Impl::safe_answer(HttpRequest& request) {
  try {
    return handlers_.answer(request);
  } catch (const std::exception& e) {
    return handlers_.refusal(500, e.what());
  } catch (...) {
    return handlers_.refusal(500, "internal error");
  }
}

void ConnectionLoop::Impl::take_answers() {
  std::vector<Answer> answers;
  {
    std::lock_guard<std::mutex> lock(answers_mutex_);
    answers.swap(answers_);
  }
  for (auto& answer : answers) {
    auto found = connections_.find(answer.id);
    if (found != connections_.end()) respond(answer.id, found->second, answer.response);
  }
}

void ConnectionLoop::Impl::refuse(uint64_t id, Connection& connection, int status, const std::string& why) {
  connection.keep_alive = false;
  connection.head_only = false;
  connection.linger = true;
  connection.phase = Phase::answering;
  respond(id, connection, handlers_.refusal(status, why));
}

void ConnectionLoop::Impl::respond(uint64_t id, Connection& connection, const HttpResponse& response) {
  connection.close_after = !connection.keep_alive || stopping_;
  connection.to_send = serialize_response(response, !connection.close_after, connection.head_only);
  connection.sent = 0;
  connection.phase = Phase::writing;
  connection.deadline = Clock::now() + limits_.request_timeout;
  rewatch(connection, id, EPOLLOUT);
  write_to(id, connection);
}

void ConnectionLoop::Impl::write_to(uint64_t id, Connection& connection) {
  while (connection.sent < connection.to_send.size()) {
    const auto put = ::send(connection.fd, connection.to_send.data() + connection.sent,
                            connection.to_send.size() - connection.sent, MSG_NOSIGNAL);
    if (put < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;  // EPOLLOUT brings us back
      return close_connection(id);
    }
    connection.sent += static_cast<size_t>(put);
  }
  finish_answer(id, connection);
}

void ConnectionLoop::Impl::finish_answer(uint64_t id, Connection& connection) {
  connection.to_send.clear();
  if (stopping_ || (connection.close_after && !connection.linger)) return close_connection(id);
  if (connection.close_after) {
    ::shutdown(connection.fd, SHUT_WR);
    connection.phase = Phase::lingering;
    connection.deadline = Clock::now() + kLinger;
    rewatch(connection, id, EPOLLIN | EPOLLRDHUP);
    return;
  }
  connection.phase = Phase::reading;
  connection.request_timed = false;
  connection.continue_sent = false;
  connection.deadline = Clock::now() + limits_.idle_timeout;
  rewatch(connection, id, EPOLLIN | EPOLLRDHUP);
  if (!connection.received.empty()) advance(id, connection);  // a pipelined request
}

}  // namespace nmt::serve
