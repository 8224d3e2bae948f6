#pragma once
// The on-disk layout of a prepared corpus (nmt/text/prepared_corpus.h), shared by its
// writer and reader. Private to lib/text/.
//
//   [header, 128 bytes][ids][source lengths u16][target lengths u16][id offsets u64]
//   [line numbers u64][metadata JSON]
//
// Sections start at multiples of 8. Integers are little-endian (byte_order says so).
#include <cstdint>
#include <cstring>

namespace nmt::prepared_format {

constexpr char kMagic[8] = {'N', 'M', 'T', 'P', 'R', 'E', 'P', '\n'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kByteOrder = 0x01020304;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t byte_order;
  uint32_t id_bytes;    // 2 or 4
  uint32_t header_crc;  // CRC-32 of this header with header_crc = 0
  uint64_t pairs;
  uint64_t ids;         // ids in the ids section (both sides of every pair)
  uint64_t ids_offset, source_lengths_offset, target_lengths_offset, id_offsets_offset, line_numbers_offset;
  uint64_t metadata_offset, metadata_bytes;
  uint64_t file_bytes;
  uint32_t ids_crc, source_lengths_crc, target_lengths_crc, id_offsets_crc, line_numbers_crc, metadata_crc;
};
static_assert(sizeof(Header) == 128, "the header is 128 bytes on disk");

inline uint64_t align8(uint64_t offset) { return (offset + 7) & ~uint64_t(7); }

}  // namespace nmt::prepared_format
