// HttpConnections over real sockets on loopback: slow clients do not hold it, deadlines
// and per-client limits are kept, pipelined requests are answered in order, answers come
// from other threads, and stopping closes the listener and answers what was received in full.
#include "support/catch.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nmt/serve/http_connections.h"

using namespace nmt::serve;
using namespace std::chrono_literals;

namespace {

int loopback_listener(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(fd, 1024) == 0);
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  port = ntohs(address.sin_port);
  return fd;
}

// A connection to 127.0.0.1:port from `source` (any 127.x.y.z is this machine), reads time out after 5 s.
int connect_from(const char* source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, source, &local.sin_addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(port));
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof server) == 0);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

void send_text(int fd, const std::string& text) {
  REQUIRE(::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size()));
}

// Everything until the server closes (or 5 s pass).
std::string read_to_end(int fd) {
  std::string all;
  char buffer[4096];
  ssize_t got;
  while ((got = ::recv(fd, buffer, sizeof buffer, 0)) > 0) all.append(buffer, static_cast<size_t>(got));
  return all;
}

// One response: its head and the Content-Length bytes after it.
std::string read_response(int fd) {
  std::string all;
  char c;
  while (all.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) all += c;
  const auto at = all.find("Content-Length: ");
  if (at == std::string::npos) return all;
  size_t length = std::stoul(all.substr(at + 16));
  while (length > 0 && ::recv(fd, &c, 1, 0) == 1) {
    all += c;
    --length;
  }
  return all;
}

std::string body_of(const std::string& response) { return response.substr(response.find("\r\n\r\n") + 4); }

// Connections serving on a free port in a thread: GET answers its path; GET /slow is
// answered from another thread once `release` is set.
struct TestServer {
  explicit TestServer(ConnectionLimits limits)
      : listening(loopback_listener(port)),
        connections(limits, RequestHandlers{[this](HttpRequest request, Responder respond) {
                                              {
                                                std::lock_guard<std::mutex> lock(origins_mutex);
                                                origins.push_back(request.origin);
                                              }
                                              HttpResponse response;
                                              response.body = request.path();
                                              if (request.path() != "/slow") return respond(response);
                                              answerers.emplace_back([this, respond, response] {
                                                release_future.wait();
                                                respond(response);
                                              });
                                            },
                                            [](const Refusal& refusal) {
                                              HttpResponse response;
                                              response.status = refusal.status;
                                              response.body = refusal.why;
                                              return response;
                                            }}),
        thread([this] { connections.run(listening, "test"); }) {}
  ~TestServer() {
    release_slow();
    connections.request_stop();
    if (thread.joinable()) thread.join();
    for (auto& answerer : answerers) answerer.join();
  }
  void release_slow() {
    if (released) return;
    released = true;
    release.set_value();
  }
  RequestOrigin origin(size_t i) {
    std::lock_guard<std::mutex> lock(origins_mutex);
    REQUIRE(i < origins.size());
    return origins[i];
  }
  bool released = false;
  std::mutex origins_mutex;
  std::vector<RequestOrigin> origins;  // of every request handed to the handler, in order
  int port = 0;
  int listening;
  std::promise<void> release;
  std::shared_future<void> release_future = release.get_future().share();
  std::vector<std::thread> answerers;  // connection thread only, joined after it ended
  HttpConnections connections;
  std::thread thread;
};

}  // namespace

TEST_CASE("an answer given from another thread reaches its connection", "[serve][http]") {
  TestServer server(ConnectionLimits{});
  const int fd = connect_from("127.0.0.1", server.port);
  send_text(fd, "GET /slow HTTP/1.1\r\n\r\n");
  std::this_thread::sleep_for(100ms);
  server.release_slow();
  CHECK(body_of(read_response(fd)) == "/slow");
  send_text(fd, "GET /after HTTP/1.1\r\n\r\n");  // the connection is kept
  CHECK(body_of(read_response(fd)) == "/after");
  ::close(fd);
}

TEST_CASE("500 slow connections from one address do not keep another client waiting", "[serve][http]") {
  ConnectionLimits limits;  // the defaults nmt-serve uses
  TestServer server(limits);
  std::vector<int> slow;
  for (int i = 0; i < 500; ++i) {
    slow.push_back(connect_from("127.0.0.1", server.port));
    ::send(slow.back(), "GET /health HTTP/1.1\r\nX-Slow: ", 30, MSG_NOSIGNAL);
  }
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  const int other = connect_from("127.0.0.2", server.port);
  send_text(other, "GET /health HTTP/1.1\r\n\r\n");
  const auto answer = read_response(other);
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(body_of(answer) == "/health");
  CHECK(waited < 1s);
  // Over the per-address limit: refused with 503 at once, not held.
  const auto refused = read_to_end(slow.back());
  CHECK(refused.rfind("HTTP/1.1 503", 0) == 0);
  CHECK_THAT(refused, HasSubstring("too many connections from 127.0.0.1"));
  for (const int fd : slow) ::close(fd);
  ::close(other);
}

TEST_CASE("a request that arrives too slowly gets 408 within its deadline", "[serve][http]") {
  ConnectionLimits limits;
  limits.request_timeout = 300ms;
  limits.idle_timeout = 3s;
  TestServer server(limits);
  const int slow = connect_from("127.0.0.1", server.port);
  send_text(slow, "GET /health HTTP/1.1\r\n");
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(150ms);
  send_text(slow, "X-Still: coming\r\n");  // trickling does not extend the deadline
  const auto answer = read_to_end(slow);
  CHECK(answer.rfind("HTTP/1.1 408 Request Timeout\r\n", 0) == 0);
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  ::close(slow);
}

TEST_CASE("a keep-alive connection idle past its timeout is closed", "[serve][http]") {
  ConnectionLimits limits;
  limits.request_timeout = 3s;
  limits.idle_timeout = 300ms;
  TestServer server(limits);
  const int idle = connect_from("127.0.0.1", server.port);
  send_text(idle, "GET /a HTTP/1.1\r\n\r\n");
  CHECK(body_of(read_response(idle)) == "/a");
  const auto start = std::chrono::steady_clock::now();
  CHECK(read_to_end(idle).empty());
  CHECK(std::chrono::steady_clock::now() - start < 1s);  // not the 3 s of a request
  ::close(idle);
}

TEST_CASE("pipelined requests are answered in order on one connection", "[serve][http]") {
  TestServer server(ConnectionLimits{});
  const int fd = connect_from("127.0.0.1", server.port);
  send_text(fd, "GET /first HTTP/1.1\r\n\r\nHEAD /second HTTP/1.1\r\n\r\nGET /third HTTP/1.1\r\nConnection: close\r\n\r\n");
  const auto first = read_response(fd);
  CHECK(body_of(first) == "/first");
  CHECK_THAT(first, HasSubstring("Connection: keep-alive"));
  // HEAD: the head says how long the body would be, and no body follows.
  std::string second;
  char c;
  while (second.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) second += c;
  CHECK_THAT(second, HasSubstring("Content-Length: 7\r\n"));
  const auto third = read_to_end(fd);
  CHECK(body_of(third) == "/third");
  CHECK_THAT(third, HasSubstring("Connection: close"));
  ::close(fd);
}

TEST_CASE("a refused request is answered before the connection closes", "[serve][http]") {
  ConnectionLimits limits;
  limits.http.max_body_bytes = 10;
  TestServer server(limits);
  const int fd = connect_from("127.0.0.1", server.port);
  send_text(fd, "POST /v1/translate HTTP/1.1\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'x'));
  const auto answer = read_to_end(fd);
  CHECK(answer.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0) == 0);
  CHECK_THAT(answer, HasSubstring("Connection: close"));
  ::close(fd);
}

TEST_CASE("stopping answers the requests received in full and closes the others", "[serve][http]") {
  auto server = std::make_unique<TestServer>(ConnectionLimits{});
  const int busy = connect_from("127.0.0.1", server->port);
  send_text(busy, "GET /slow HTTP/1.1\r\n\r\n");
  const int idle = connect_from("127.0.0.1", server->port);
  send_text(idle, "GET /partial HTTP/1.1\r\n");
  std::this_thread::sleep_for(200ms);
  server->connections.request_stop();
  CHECK(read_to_end(idle).empty());  // no complete request: closed at once
  // The listening socket is closed when stopping begins: a new client is refused at once
  // rather than accepted into a backlog and reset at exit.
  const int late = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server->port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(::connect(late, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0);
  ::close(late);
  server->release_slow();
  const auto answer = read_to_end(busy);
  CHECK(body_of(answer) == "/slow");
  CHECK_THAT(answer, HasSubstring("Connection: close"));
  server->thread.join();  // run() returned
  ::close(busy);
  ::close(idle);
}

TEST_CASE("at the connection limit the longest-idle connection makes room for a new client", "[serve][http]") {
  ConnectionLimits limits;
  limits.max_connections = 4;
  limits.idle_timeout = 30s;  // without room made, the new client would wait this long
  TestServer server(limits);
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(connect_from("127.0.0.1", server.port));
    std::this_thread::sleep_for(20ms);  // the first is the longest idle
  }
  std::this_thread::sleep_for(100ms);
  const auto start = std::chrono::steady_clock::now();
  const int other = connect_from("127.0.0.2", server.port);
  send_text(other, "GET /health HTTP/1.1\r\n\r\n");
  CHECK(body_of(read_response(other)) == "/health");
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(read_to_end(idle.front()).empty());  // closed to make room
  for (const int fd : idle) ::close(fd);
  ::close(other);
}

TEST_CASE("at the connection limit with every connection answered a new client gets 503 at once", "[serve][http]") {
  ConnectionLimits limits;
  limits.max_connections = 2;
  TestServer server(limits);
  std::vector<int> busy;
  for (int i = 0; i < 2; ++i) {
    busy.push_back(connect_from("127.0.0.1", server.port));
    send_text(busy.back(), "GET /slow HTTP/1.1\r\n\r\n");
  }
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  const int late = connect_from("127.0.0.2", server.port);
  const auto refused = read_to_end(late);
  CHECK(refused.rfind("HTTP/1.1 503", 0) == 0);
  CHECK_THAT(refused, HasSubstring("--max-connections"));
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  server.release_slow();
  for (const int fd : busy) CHECK(body_of(read_response(fd)) == "/slow");  // the answered ones keep theirs
  for (const int fd : busy) ::close(fd);
  ::close(late);
}

TEST_CASE("a request's origin names its client and says when the client went away", "[serve][http]") {
  TestServer server(ConnectionLimits{});
  const int first = connect_from("127.0.0.3", server.port);
  send_text(first, "GET /slow HTTP/1.1\r\n\r\n");
  const int second = connect_from("127.0.0.3", server.port);
  send_text(second, "GET /slow HTTP/1.1\r\n\r\n");
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(server.origins_mutex);
      if (server.origins.size() == 2) break;
    }
    std::this_thread::sleep_for(10ms);
  }
  const auto a = server.origin(0), b = server.origin(1);
  CHECK(a.client == "127.0.0.3");
  CHECK(a.connection != b.connection);
  CHECK_FALSE(a.abandoned());
  ::close(first);  // the client leaves while its request is being answered
  while (!a.abandoned() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  CHECK(a.abandoned());
  CHECK_FALSE(b.abandoned());  // the other connection still waits for its answer
  server.release_slow();
  CHECK(body_of(read_response(second)) == "/slow");
  ::close(second);
}
