#pragma once
// The bytes of plain values as the model formats store them (CTranslate2's and Marian's
// files are little-endian, as every machine we run on; their writers and readers check it).
#include <cstdint>
#include <string>

namespace nmt {

inline bool host_is_little_endian() {
  const uint16_t probe = 1;
  return *reinterpret_cast<const uint8_t*>(&probe) == 1;
}

/// The object representation of `value` (a number or a struct of numbers).
template <class T>
std::string raw_bytes(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace nmt
