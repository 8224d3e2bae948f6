#include "nmt/serve/connection_loop.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "nmt/base/error.h"
#include "nmt/serve/worker_pool.h"

namespace nmt::serve {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenerId = 0, kWakeId = 1, kFirstConnectionId = 2;
constexpr int kSpareDescriptors = 64;  // for the model, logs, the tokenizers' files
constexpr auto kSweepEvery = std::chrono::milliseconds(100);
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);
// After refusing a request whose body may still be arriving, the connection reads and drops
// for this long before closing, so the refusal is not lost to a reset.
constexpr auto kLinger = std::chrono::seconds(2);
constexpr size_t kReadChunk = 16 * 1024;
const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";

std::string errno_text() { return std::strerror(errno); }

void check_syscall(int result, const char* what) {
  if (result < 0) throw Error(std::string("nmt-serve: ") + what + " failed: " + errno_text());
}

std::string client_address(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof text);
  else if (address.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, text, sizeof text);
  return text;
}

// The soft open-file limit, raised towards `wanted` (within the hard limit) if lower.
int open_file_limit(int wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return wanted;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < static_cast<rlim_t>(wanted)) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min<rlim_t>(limit.rlim_max, wanted);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? wanted : static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 30));
}

}  // namespace

struct ConnectionLoop::Impl {
  enum class Phase {
    reading,    // waiting for (the rest of) a request
    answering,  // a handler has the request; nothing is read meanwhile
    writing,    // sending the answer
    lingering,  // answer sent after a refusal: dropping what the client still sends
  };

  struct Connection {
    Connection(int descriptor, std::string address, const HttpLimits& limits)
        : fd(descriptor), client(std::move(address)), parser(limits) {}
    int fd;
    std::string client;
    std::string received;
    HttpRequestParser parser;
    Phase phase = Phase::reading;
    bool request_timed = false;  // the deadline counts from the request's first byte
    bool continue_sent = false;
    bool keep_alive = false;  // of the request being answered
    bool head_only = false;
    bool close_after = false;
    bool linger = false;
    std::string to_send;
    size_t sent = 0;
    std::chrono::steady_clock::time_point deadline;
  };

  struct Answer {
    uint64_t id;
    HttpResponse response;
  };

  Impl(ConnectionLimits limits, RequestHandlers handlers, int workers);
  ~Impl();

  void run(int listening, const std::string& name);
  void request_stop();

  void watch(int fd, uint64_t id, uint32_t events);
  void rewatch(const Connection& connection, uint64_t id, uint32_t events);
  void handle_event(const epoll_event& event);
  void accept_all();
  void pause_accepting(std::optional<Clock::time_point> until);
  void resume_accepting();
  void refuse_connection(int fd, const std::string& client);
  void read_from(uint64_t id, Connection& connection);
  void advance(uint64_t id, Connection& connection);
  void dispatch(uint64_t id, Connection& connection);
  void respond(uint64_t id, Connection& connection, const HttpResponse& response);
  void refuse(uint64_t id, Connection& connection, int status, const std::string& why);
  void write_to(uint64_t id, Connection& connection);
  void finish_answer(uint64_t id, Connection& connection);
  void take_answers();
  void sweep(Clock::time_point now);
  void begin_stop();
  void close_connection(uint64_t id);
  void close_all();
  HttpResponse safe_answer(HttpRequest& request);

  ConnectionLimits limits_;
  RequestHandlers handlers_;
  int workers_;
  int max_connections_;
  int epoll_ = -1;
  int wake_ = -1;
  int listening_ = -1;
  std::string name_;
  std::atomic<bool> stop_requested_{false};
  bool stopping_ = false;
  bool accepting_ = false;
  std::optional<Clock::time_point> accept_again_at_;
  uint64_t next_id_ = kFirstConnectionId;
  std::unordered_map<uint64_t, Connection> connections_;
  std::unordered_map<std::string, int> per_client_;
  std::mutex answers_mutex_;
  std::vector<Answer> answers_;
  std::unique_ptr<WorkerPool> pool_;
};

ConnectionLoop::Impl::Impl(ConnectionLimits limits, RequestHandlers handlers, int workers)
    : limits_(std::move(limits)), handlers_(std::move(handlers)), workers_(std::max(1, workers)) {
  const int wanted = limits_.max_connections + kSpareDescriptors;
  max_connections_ = std::max(1, std::min(limits_.max_connections, open_file_limit(wanted) - kSpareDescriptors));
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  check_syscall(epoll_, "epoll_create1");
  wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_ < 0) {
    ::close(epoll_);
    check_syscall(wake_, "eventfd");
  }
}

ConnectionLoop::Impl::~Impl() {
  pool_.reset();
  close_all();
  ::close(wake_);
  ::close(epoll_);
}

void ConnectionLoop::Impl::request_stop() {
  stop_requested_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(wake_, &one, sizeof one);  // a full counter wakes the loop too
}

void ConnectionLoop::Impl::watch(int fd, uint64_t id, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = id;
  check_syscall(epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event), "epoll_ctl");
}

void ConnectionLoop::Impl::rewatch(const Connection& connection, uint64_t id, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = id;
  check_syscall(epoll_ctl(epoll_, EPOLL_CTL_MOD, connection.fd, &event), "epoll_ctl");
}

void ConnectionLoop::Impl::run(int listening, const std::string& name) {
  if (stop_requested_) return;
  listening_ = listening;
  name_ = name;
  check_syscall(fcntl(listening_, F_SETFL, fcntl(listening_, F_GETFL) | O_NONBLOCK), "fcntl");
  watch(wake_, kWakeId, EPOLLIN);
  watch(listening_, kListenerId, EPOLLIN);
  accepting_ = true;
  pool_ = std::make_unique<WorkerPool>(workers_);
  // However run() ends, the workers finish and every connection is closed.
  struct Cleanup {
    Impl& loop;
    ~Cleanup() {
      loop.pool_.reset();
      loop.close_all();
    }
  } cleanup{*this};
  auto last_sweep = Clock::now();
  std::vector<epoll_event> events(256);
  while (true) {
    if (stop_requested_ && !stopping_) begin_stop();
    if (stopping_ && connections_.empty()) return;
    const int ready = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                                 static_cast<int>(kSweepEvery.count()));
    if (ready < 0 && errno != EINTR) check_syscall(ready, "epoll_wait");
    for (int i = 0; i < ready; ++i) handle_event(events[static_cast<size_t>(i)]);
    const auto now = Clock::now();
    if (now - last_sweep >= kSweepEvery) {
      sweep(now);
      last_sweep = now;
    }
  }
}

void ConnectionLoop::Impl::handle_event(const epoll_event& event) {
  const uint64_t id = event.data.u64;
  if (id == kListenerId) return accept_all();
  if (id == kWakeId) {
    uint64_t count = 0;
    [[maybe_unused]] const auto taken = ::read(wake_, &count, sizeof count);
    return take_answers();
  }
  auto found = connections_.find(id);
  if (found == connections_.end()) return;  // closed earlier in this batch of events
  auto& connection = found->second;
  if ((event.events & EPOLLERR) != 0) return close_connection(id);
  // Gone both ways while its request is answered: nobody can read the answer (and a hang-up
  // is reported whatever the events asked for, so leaving it would spin).
  if (connection.phase == Phase::answering && (event.events & EPOLLHUP) != 0) return close_connection(id);
  if (connection.phase == Phase::writing && (event.events & (EPOLLOUT | EPOLLHUP)) != 0) return write_to(id, connection);
  if ((event.events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) != 0) read_from(id, connection);
}

void ConnectionLoop::Impl::accept_all() {
  while (accepting_) {
    if (static_cast<int>(connections_.size()) >= max_connections_) return pause_accepting(std::nullopt);
    sockaddr_storage address{};
    socklen_t size = sizeof address;
    const int fd = accept4(listening_, reinterpret_cast<sockaddr*>(&address), &size, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        return pause_accepting(Clock::now() + kAcceptRetry);
      throw Error("stopped accepting connections on " + name_ + ": " + errno_text());
    }
    auto client = client_address(address);
    if (per_client_[client] >= limits_.max_per_client) {
      refuse_connection(fd, client);
      continue;
    }
    const uint64_t id = next_id_++;
    auto& connection = connections_.try_emplace(id, fd, client, limits_.http).first->second;
    ++per_client_[client];
    connection.deadline = Clock::now() + limits_.idle_timeout;
    try {
      watch(fd, id, EPOLLIN | EPOLLRDHUP);
    } catch (...) {
      close_connection(id);
      throw;
    }
  }
}

// Stops watching the listening socket, until `until` or (none) until a connection closes.
void ConnectionLoop::Impl::pause_accepting(std::optional<Clock::time_point> until) {
  if (!accepting_) return;
  accepting_ = false;
  accept_again_at_ = until;
  epoll_ctl(epoll_, EPOLL_CTL_DEL, listening_, nullptr);
}

void ConnectionLoop::Impl::resume_accepting() {
  if (accepting_ || stopping_) return;
  accept_again_at_.reset();
  accepting_ = true;
  watch(listening_, kListenerId, EPOLLIN);
}

// One attempt to say why, then close: a client over its limit gets no more of our time.
void ConnectionLoop::Impl::refuse_connection(int fd, const std::string& client) {
  const auto response = handlers_.refusal(503, "too many connections from " + client + " (at most " +
                                                   std::to_string(limits_.max_per_client) +
                                                   " per client address: --max-client-connections)");
  const auto bytes = serialize_response(response, false, false);
  [[maybe_unused]] const auto sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
}

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

void ConnectionLoop::Impl::sweep(Clock::time_point now) {
  if (!accepting_ && accept_again_at_ && now >= *accept_again_at_) resume_accepting();
  std::vector<uint64_t> expired;
  for (const auto& [id, connection] : connections_)
    if (connection.phase != Phase::answering && now >= connection.deadline) expired.push_back(id);
  for (const auto id : expired) {
    auto& connection = connections_.at(id);
    if (connection.phase == Phase::reading && connection.request_timed) {
      // One attempt to say why; a client this slow gets no new deadline to read it in.
      const auto response = handlers_.refusal(
          408, "the request did not arrive within " + std::to_string(limits_.request_timeout.count() / 1000.0) +
                   " s of its first byte (--request-timeout)");
      const auto bytes = serialize_response(response, false, false);
      [[maybe_unused]] const auto sent = ::send(connection.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close_connection(id);
  }
}

// No new connections; connections without a complete request close now; requests being
// answered finish, and their connections close after the answer.
void ConnectionLoop::Impl::begin_stop() {
  stopping_ = true;
  if (accepting_) epoll_ctl(epoll_, EPOLL_CTL_DEL, listening_, nullptr);
  accepting_ = false;
  std::vector<uint64_t> idle;
  for (const auto& [id, connection] : connections_)
    if (connection.phase == Phase::reading || connection.phase == Phase::lingering) idle.push_back(id);
  for (const auto id : idle) close_connection(id);
}

void ConnectionLoop::Impl::close_connection(uint64_t id) {
  auto found = connections_.find(id);
  if (found == connections_.end()) return;
  ::close(found->second.fd);  // also takes it out of the epoll set
  auto count = per_client_.find(found->second.client);
  if (count != per_client_.end() && --count->second <= 0) per_client_.erase(count);
  connections_.erase(found);
  if (!accepting_ && !accept_again_at_ && listening_ >= 0) resume_accepting();
}

void ConnectionLoop::Impl::close_all() {
  for (auto& [id, connection] : connections_) ::close(connection.fd);
  connections_.clear();
  per_client_.clear();
}

ConnectionLoop::ConnectionLoop(ConnectionLimits limits, RequestHandlers handlers, int workers)
    : impl_(std::make_unique<Impl>(std::move(limits), std::move(handlers), workers)) {}

ConnectionLoop::~ConnectionLoop() = default;

void ConnectionLoop::run(int listening, const std::string& name) { impl_->run(listening, name); }

void ConnectionLoop::request_stop() { impl_->request_stop(); }

int ConnectionLoop::max_connections() const { return impl_->max_connections_; }

}  // namespace nmt::serve
