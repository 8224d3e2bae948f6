#pragma once
// A checksummed envelope for binary files (checkpoints): a short text header that names
// the kind, the payload's CRC-32 (zlib) and its length, then the payload. A bit flip or a
// truncation is found before anything parses the payload.
//
//   NMT-SEALED 1 <kind>\n
//   crc32 <8 lowercase hex digits>\n
//   bytes <decimal length>\n
//   \n
//   <payload>
#include <cstdint>
#include <string>
#include <string_view>

namespace nmt {

/// The envelope around `payload`.
std::string seal(std::string_view kind, std::string_view payload);

struct Unsealed {
  bool sealed = false;       ///< false: `bytes` has no envelope (payload is all of it)
  std::string_view payload;  ///< points into the bytes given to unseal
};

/// Checks the envelope of `bytes` (read from `path`, named in errors). Without an envelope
/// returns sealed = false and the whole input; with one, verifies kind, length and checksum
/// and throws nmt::Error "PATH is corrupted (checksum mismatch)", "PATH is truncated ..."
/// or "PATH: bad header ...".
Unsealed unseal(std::string_view bytes, std::string_view kind, const std::string& path);

/// zlib's CRC-32 of `bytes`.
uint32_t crc32_of(std::string_view bytes);

}  // namespace nmt
