#include "mapping_guard.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace nmt::text_detail {
namespace {

struct Slot {
  std::atomic<uintptr_t> start{0};  // 0: free; set last, once bytes and message are written
  size_t bytes = 0;
  char message[1024] = {};
  size_t length = 0;
};

Slot slots[32];
std::mutex registering;  // writers only: the handler reads without locks
struct sigaction previous {};

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const auto& slot : slots) {
    const uintptr_t start = slot.start.load(std::memory_order_acquire);
    if (start != 0 && address >= start && address - start < slot.bytes) {
      const ssize_t ignored = ::write(STDERR_FILENO, slot.message, slot.length);
      (void)ignored;
      ::_exit(1);
    }
  }
  // Not ours: what would have happened without this handler.
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler != nullptr) {
    previous.sa_handler(signal);
  } else {
    ::signal(SIGBUS, SIG_DFL);  // returning re-runs the access, which now ends the process
  }
}

void install_once() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous);
  });
}

}  // namespace

void guard_mapping(const void* start, size_t bytes, const std::string& path) {
  if (start == nullptr || bytes == 0) return;
  install_once();
  std::lock_guard<std::mutex> lock(registering);
  for (auto& slot : slots) {
    if (slot.start.load(std::memory_order_relaxed) != 0) continue;
    const std::string message = std::string(program_invocation_short_name) + ": error: " + path +
                                " was truncated while this run read it (by another process); the run stops here: "
                                "restore or prepare it again, then resume\n";
    slot.length = std::min(message.size(), sizeof slot.message);
    std::memcpy(slot.message, message.data(), slot.length);
    slot.bytes = bytes;
    slot.start.store(reinterpret_cast<uintptr_t>(start), std::memory_order_release);
    return;
  }
}

void unguard_mapping(const void* start) {
  std::lock_guard<std::mutex> lock(registering);
  for (auto& slot : slots)
    if (slot.start.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(start)) {
      slot.start.store(0, std::memory_order_release);
      return;
    }
}

}  // namespace nmt::text_detail
