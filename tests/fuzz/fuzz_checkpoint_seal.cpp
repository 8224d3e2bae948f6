// libFuzzer: the checkpoint envelope (header, length, CRC-32) on arbitrary bytes. A
// payload it accepts must seal back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nmt/base/error.h"
#include "nmt/base/sealed_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto opened = nmt::unseal(bytes, "checkpoint", "<fuzz>");
    if (opened.sealed && nmt::seal("checkpoint", opened.payload) != bytes) __builtin_trap();
    if (!opened.sealed && opened.payload.size() != bytes.size()) __builtin_trap();
  } catch (const nmt::Error&) {
  }
  return 0;
}
