// HttpConnections (http_session.h): accepting within the limits, and stopping.
#include "http_session.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <vector>

#include "nmt/base/error.h"

namespace nmt::serve {
namespace {

constexpr int kSpareDescriptors = 64;  // for the model, logs, the tokenizers' files
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);

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

// Out of descriptors or memory for a moment: accepting again later may work.
bool temporary(const error_code& error) {
  return error == net::error::no_descriptors || error == net::error::no_buffer_space ||
         error == net::error::no_memory || error.value() == ENFILE;
}

// The client gave up while waiting in the backlog, or a signal came: accept the next.
bool skippable(const error_code& error) {
  return error == net::error::connection_aborted || error == net::error::interrupted || error.value() == EPROTO;
}

}  // namespace

HttpConnections::Impl::Impl(ConnectionLimits limits, RequestHandlers handlers)
    : limits_(std::move(limits)), handlers_(std::move(handlers)) {
  const int wanted = limits_.max_connections + kSpareDescriptors;
  max_connections_ = std::max(1, std::min(limits_.max_connections, open_file_limit(wanted) - kSpareDescriptors));
}

HttpConnections::Impl::~Impl() {
  // Sessions still here (run() ended by a throw) go with the io_context's handlers.
  sessions_.clear();
}

void HttpConnections::Impl::run(int listening, const std::string& name) {
  name_ = name;
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (::getsockname(listening, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    ::close(listening);
    throw Error("nmt-serve: " + name + " is not a socket");
  }
  acceptor_.assign(address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), listening);
  if (stop_requested_) return acceptor_.close();  // (its begin_stop() is queued too)
  accept_next();
  io_.run();
  if (!accept_failure_.empty()) throw Error(accept_failure_);
}

void HttpConnections::Impl::request_stop() {
  stop_requested_ = true;
  net::post(io_, [this] { begin_stop(); });
}

// Accepting never pauses at the connection limit: a client left in the kernel's backlog
// waits, unanswered, until some connection's deadline frees a slot (seconds). At the limit
// an idle or slow connection makes room for the new one, or the new one gets a 503 at once.
void HttpConnections::Impl::accept_next() {
  if (stopping_ || accepting_ || retry_pending_) return;
  accepting_ = true;
  acceptor_.async_accept([this](const error_code& error, tcp::socket socket) { on_accept(error, std::move(socket)); });
}

void HttpConnections::Impl::on_accept(const error_code& error, tcp::socket socket) {
  accepting_ = false;
  if (stopping_) return;
  if (error) {
    if (skippable(error)) return accept_next();
    if (temporary(error)) {
      retry_pending_ = true;
      accept_retry_.expires_after(kAcceptRetry);
      accept_retry_.async_wait([this](const error_code&) {
        retry_pending_ = false;
        accept_next();
      });
      return;
    }
    accept_failure_ = "stopped accepting connections on " + name_ + ": " + error.message();
    return begin_stop();
  }
  error_code unknown;
  const auto endpoint = socket.remote_endpoint(unknown);
  const auto client = unknown ? std::string("?") : endpoint.address().to_string();
  if (per_client_[client] >= limits_.max_per_client) {
    refuse_connection(socket, client,
                      "too many connections from " + client + " (at most " + std::to_string(limits_.max_per_client) +
                          " per client address: --max-client-connections)");
  } else if (static_cast<int>(sessions_.size()) >= max_connections_ && !make_room()) {
    refuse_connection(socket, client,
                      "the server is at its connection limit (" + std::to_string(max_connections_) +
                          ", --max-connections) and every connection is being answered: retry shortly");
  } else {
    ++per_client_[client];
    auto session = std::make_shared<HttpSession>(std::move(socket), client, ++connections_opened_, *this);
    sessions_.emplace(session.get(), session);
    session->start();
  }
  accept_next();
}

// One attempt to say why, then close: a refused client gets no more of our time.
void HttpConnections::Impl::refuse_connection(tcp::socket& socket, const std::string& client, const std::string& why) {
  send_without_waiting(socket, handlers_.refusal(Refusal{503, why}));
  error_code ignored;
  socket.close(ignored);
  if (per_client_[client] == 0) per_client_.erase(client);
}

// A linear scan: at most max_connections sessions, only when the limit is reached, and
// cheaper than the connection it saves from waiting.
bool HttpConnections::Impl::make_room() {
  HttpSession* oldest = nullptr;
  for (const auto& [key, session] : sessions_)
    if (session->evictable() && (oldest == nullptr || session->phase_since() < oldest->phase_since()))
      oldest = session.get();
  if (oldest == nullptr) return false;
  ++evicted_;
  oldest->evict();  // closed(): out of sessions_ now
  return true;
}

// The listening socket is closed first, so that a client connecting now is refused by the
// kernel instead of being accepted into a backlog nobody reads. Connections without a
// complete request close now; requests being answered finish, and their connections close
// after the answer.
void HttpConnections::Impl::begin_stop() {
  if (stopping_) return;
  stopping_ = true;
  error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  std::vector<std::shared_ptr<HttpSession>> open;  // kept alive while they close
  for (const auto& [key, session] : sessions_) open.push_back(session);
  for (const auto& session : open) session->stop();
}

void HttpConnections::Impl::closed(HttpSession* session, const std::string& client) {
  sessions_.erase(session);
  auto count = per_client_.find(client);
  if (count != per_client_.end() && --count->second <= 0) per_client_.erase(count);
}

HttpConnections::HttpConnections(ConnectionLimits limits, RequestHandlers handlers)
    : impl_(std::make_unique<Impl>(std::move(limits), std::move(handlers))) {}

HttpConnections::~HttpConnections() = default;

void HttpConnections::run(int listening, const std::string& name) { impl_->run(listening, name); }

void HttpConnections::request_stop() { impl_->request_stop(); }

int HttpConnections::max_connections() const { return impl_->max_connections_; }

}  // namespace nmt::serve
