#include "nmt/serve/connection_loop.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "connection_loop_impl.h"
#include "nmt/base/error.h"

namespace nmt::serve {

using namespace connection_detail;

namespace {

void check_syscall(int result, const char* what) {
  if (result < 0) throw Error(std::string("nmt-serve: ") + what + " failed: " + errno_text());
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
