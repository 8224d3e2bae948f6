// libFuzzer: Marian's .npz reader (export/marian_npz.h: the zip through libzip, the .npy headers
// parsed by us) on arbitrary bytes. Whatever it accepts must write back and read again the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nmt/base/error.h"
#include "nmt/export/marian_npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto items = nmt::read_marian_npz(bytes, "<fuzz>");
    const auto again = nmt::read_marian_npz(nmt::marian_npz_bytes(items), "<fuzz again>");
    if (again.size() != items.size()) __builtin_trap();
    for (size_t i = 0; i < items.size(); ++i)
      if (again[i].name != items[i].name || again[i].shape != items[i].shape || again[i].bytes != items[i].bytes)
        __builtin_trap();
  } catch (const nmt::Error&) {
  }
  return 0;
}
