#pragma once
// Private to the connection loop's files (lib/serve/connection_*.cpp): ConnectionLoop's
// state and the constants its parts share. connection_loop.cpp: the loop, its deadlines and
// its stop; connection_accept.cpp: accepting within the limits; connection_exchange.cpp:
// reading a request, handing it to a handler, writing the answer.
#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "nmt/serve/connection_loop.h"
#include "nmt/serve/worker_pool.h"

namespace nmt::serve::connection_detail {

using Clock = std::chrono::steady_clock;

inline constexpr uint64_t kListenerId = 0, kWakeId = 1, kFirstConnectionId = 2;
inline constexpr int kSpareDescriptors = 64;  // for the model, logs, the tokenizers' files
inline constexpr auto kSweepEvery = std::chrono::milliseconds(100);
inline constexpr auto kAcceptRetry = std::chrono::milliseconds(100);
// After refusing a request whose body may still be arriving, the connection reads and drops
// for this long before closing, so the refusal is not lost to a reset.
inline constexpr auto kLinger = std::chrono::seconds(2);
inline constexpr size_t kReadChunk = 16 * 1024;
inline constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";

inline std::string errno_text() { return std::strerror(errno); }

}  // namespace nmt::serve::connection_detail

namespace nmt::serve {

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
  void pause_accepting(std::optional<connection_detail::Clock::time_point> until);
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
  void sweep(connection_detail::Clock::time_point now);
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
  std::optional<connection_detail::Clock::time_point> accept_again_at_;
  uint64_t next_id_ = connection_detail::kFirstConnectionId;
  std::unordered_map<uint64_t, Connection> connections_;
  std::unordered_map<std::string, int> per_client_;
  std::mutex answers_mutex_;
  std::vector<Answer> answers_;
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace nmt::serve
