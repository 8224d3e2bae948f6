#pragma once
// Who sent a request: the batch queue shares its worker between clients by it (fair
// queueing), bounds what one client may queue, and drops a request whose client left.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace nmt::serve {

/// Set once, by the connection thread, when a connection closes before its answer was
/// sent (the client went away, or the server closed it); read by the batch worker.
using ClosedFlag = std::shared_ptr<const std::atomic<bool>>;

struct RequestOrigin {
  std::string client;       ///< the client's address ("" for a caller that is no connection)
  uint64_t connection = 0;  ///< unique per connection for the server's life (0: none)
  ClosedFlag closed;        ///< null: a caller that never goes away

  /// Nobody is left to take the answer.
  bool abandoned() const { return closed && closed->load(std::memory_order_acquire); }
};

}  // namespace nmt::serve
