#pragma once
// A 64-bit hash of bytes that is the same on every machine, build and run (FNV-1a), for
// names and cross-process comparisons; std::hash promises neither.
#include <cstdint>
#include <string_view>

namespace nmt {

inline uint64_t stable_hash(std::string_view bytes) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ULL;
  return hash;
}

}  // namespace nmt
