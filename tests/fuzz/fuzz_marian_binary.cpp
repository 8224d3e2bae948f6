// libFuzzer: Marian's .bin reader (export/marian_format.h) on arbitrary bytes. Whatever it
// accepts must write back and read again to the same items.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nmt/base/error.h"
#include "nmt/export/marian_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto items = nmt::read_marian_binary(bytes, "<fuzz>");
    std::string written;
    nmt::write_marian_binary(items, [&](std::string_view piece) { written.append(piece); });
    const auto again = nmt::read_marian_binary(written, "<fuzz again>");
    if (again.size() != items.size()) __builtin_trap();
    for (size_t i = 0; i < items.size(); ++i)
      if (again[i].name != items[i].name || again[i].shape != items[i].shape || again[i].type != items[i].type)
        __builtin_trap();
  } catch (const nmt::Error&) {
  }
  return 0;
}
