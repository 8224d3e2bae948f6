// libFuzzer: giving a SentencePiece model our special ids (text/sentencepiece_ids.h) on
// arbitrary bytes. What it accepts it must accept again, with every id staying where it is.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nmt/base/error.h"
#include "nmt/text/sentencepiece_ids.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto first = nmt::with_our_special_ids(bytes, "<fuzz>");
    const auto second = nmt::with_our_special_ids(first.serialized, "<fuzz again>");
    if (second.vocab_size != first.vocab_size) __builtin_trap();
    for (int id = 0; id < second.vocab_size; ++id)
      if (second.new_id_of[id] != id) __builtin_trap();
  } catch (const nmt::Error&) {
  }
  return 0;
}
