// Part of ConnectionLoop (connection_loop_impl.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "connection_loop_impl.h"
#include "nmt/base/error.h"

namespace nmt::serve {
namespace {

std::string client_address(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof text);
  else if (address.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, text, sizeof text);
  return text;
}

}  // namespace

using namespace connection_detail;

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

}  // namespace nmt::serve
