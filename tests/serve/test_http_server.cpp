// HttpServer's lifecycle: a listening socket that fails is an error, not a clean stop,
// and stop() returns however serve() ended.
#include "support/catch.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <future>
#include <thread>

#include "nmt/base/error.h"
#include "nmt/serve/http_server.h"

using namespace nmt::serve;

namespace {

// The descriptor of this process's listening TCP socket on `port`, or -1.
int listening_socket(int port) {
  for (int fd = 3; fd < 4096; ++fd) {
    sockaddr_in address{};
    socklen_t size = sizeof address;
    int accepting = 0;
    socklen_t length = sizeof accepting;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0 && address.sin_family == AF_INET &&
        ntohs(address.sin_port) == port && ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0 &&
        accepting != 0)
      return fd;
  }
  return -1;
}

}  // namespace

TEST_CASE("serve() throws when accepting fails, and stop() still returns", "[serve][http]") {
  BatchBackend backend{[](const std::vector<std::string>& lines, const std::vector<LineGuide>&,
                          const std::vector<const AdmittedLine*>&, const JobOptions&) {
                         return std::vector<LineResult>(lines.size());
                       },
                       [](const std::string&, const LineGuide&) { return AdmittedLine{1, {}}; }};
  BatchQueue queue(backend, BatchSettings{});
  ServerSettings settings;
  settings.port = 0;
  HttpServer server(queue, nlohmann::json::object(), settings);
  server.bind();
  const int fd = listening_socket(server.port());
  REQUIRE(fd >= 0);
  std::promise<std::string> outcome;
  std::thread serving([&] {
    try {
      server.serve();
      outcome.set_value("returned");
    } catch (const nmt::Error& e) {
      outcome.set_value(e.what());
    }
  });
  ::shutdown(fd, SHUT_RDWR);  // accept() now fails with EINVAL, as on a socket gone bad
  auto result = outcome.get_future();
  REQUIRE(result.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK_THAT(result.get(), HasSubstring("stopped accepting connections on 127.0.0.1:" + std::to_string(server.port())));
  serving.join();
  server.stop();
  queue.stop();
}
