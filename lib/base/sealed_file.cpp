#include "nmt/base/sealed_file.h"

#include <zlib.h>

#include <cstdio>

#include "nmt/base/error.h"

namespace nmt {
namespace {

constexpr std::string_view kMagic = "NMT-SEALED 1 ";

// Reads "<name> <value>\n" at `position`; returns the value and moves past the line.
std::string_view header_field(std::string_view bytes, size_t& position, std::string_view name,
                              const std::string& path) {
  const auto end = bytes.find('\n', position);
  if (end == std::string_view::npos || end - position > 64)
    throw Error(path + ": bad header (no " + std::string(name) + " line)");
  const auto line = bytes.substr(position, end - position);
  if (line.size() <= name.size() + 1 || line.substr(0, name.size()) != name || line[name.size()] != ' ')
    throw Error(path + ": bad header (expected \"" + std::string(name) + " ...\")");
  position = end + 1;
  return line.substr(name.size() + 1);
}

// Strict decimal or hex parsing: every character a digit, no sign, no overflow.
bool parse_number(std::string_view text, int base, uint64_t& value) {
  if (text.empty() || text.size() > 19) return false;
  value = 0;
  for (char c : text) {
    int digit = c >= '0' && c <= '9' ? c - '0' : (base == 16 && c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (digit < 0 || digit >= base) return false;
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
  }
  return true;
}

}  // namespace

uint32_t crc32_of(std::string_view bytes) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large payloads in pieces.
  for (size_t offset = 0; offset < bytes.size();) {
    const size_t piece = std::min<size_t>(bytes.size() - offset, 1u << 30);
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + offset), static_cast<uInt>(piece));
    offset += piece;
  }
  return static_cast<uint32_t>(crc);
}

std::string seal(std::string_view kind, std::string_view payload) {
  char checksum[16];
  std::snprintf(checksum, sizeof checksum, "%08x", crc32_of(payload));
  std::string out;
  out.reserve(payload.size() + 96);
  out.append(kMagic).append(kind).append("\ncrc32 ").append(checksum);
  out.append("\nbytes ").append(std::to_string(payload.size())).append("\n\n");
  out.append(payload);
  return out;
}

Unsealed unseal(std::string_view bytes, std::string_view kind, const std::string& path) {
  if (bytes.substr(0, kMagic.size()) != kMagic) return {false, bytes};
  size_t position = kMagic.size();
  const auto kind_end = bytes.find('\n', position);
  if (kind_end == std::string_view::npos || bytes.substr(position, kind_end - position) != kind)
    throw Error(path + ": bad header (not a sealed " + std::string(kind) + ")");
  position = kind_end + 1;
  // Only the canonical form seal() writes: a header that differs in any byte is damaged.
  uint64_t checksum = 0, length = 0;
  const auto checksum_text = header_field(bytes, position, "crc32", path);
  if (checksum_text.size() != 8 || !parse_number(checksum_text, 16, checksum))
    throw Error(path + ": bad header (crc32 is not 8 hex digits)");
  const auto length_text = header_field(bytes, position, "bytes", path);
  if (!parse_number(length_text, 10, length) || (length_text.size() > 1 && length_text[0] == '0'))
    throw Error(path + ": bad header (bytes is not a number)");
  if (position >= bytes.size() || bytes[position] != '\n') throw Error(path + ": bad header (no blank line)");
  const auto payload = bytes.substr(position + 1);
  if (payload.size() < length)
    throw Error(path + " is truncated (" + std::to_string(payload.size()) + " of " + std::to_string(length) +
                " payload bytes)");
  if (payload.size() > length) throw Error(path + " is corrupted (" + std::to_string(payload.size() - length) +
                                           " bytes after the payload)");
  if (crc32_of(payload) != checksum) throw Error(path + " is corrupted (checksum mismatch)");
  return {true, payload};
}

}  // namespace nmt
