// libFuzzer: Marian's binary lexical shortlist reader (export/marian_shortlist.h) on arbitrary
// bytes, the checksum set right first (or every input would stop at it). Whatever it accepts
// must write back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "nmt/base/error.h"
#include "nmt/export/marian_shortlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() >= 16) {
    const uint64_t sum = nmt::marian_shortlist_checksum(bytes);
    std::memcpy(bytes.data() + 8, &sum, sizeof sum);
  }
  try {
    // Vocabularies as the file's own header claims them, so that inputs get past that check.
    const int64_t sources = bytes.size() >= 48 ? static_cast<int64_t>(static_cast<uint8_t>(bytes[32])) - 1 : 0;
    const auto shortlist = nmt::read_marian_shortlist(bytes, "<fuzz>", sources, 1 << 16);
    if (shortlist.offsets.front() == 0 && nmt::marian_shortlist_bytes(shortlist) != bytes) __builtin_trap();
  } catch (const nmt::Error&) {
  }
  return 0;
}
