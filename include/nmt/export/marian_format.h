#pragma once
// Marian's binary model file (.bin), version 1, as marian-dev reads and writes it
// (src/common/binary.cpp, src/common/types.h). Read and written here because Marian ships
// no library for it and our users have no Marian. All integers little-endian:
//   u64 file version (1), u64 item count n
//   n headers of four u64: name length (with its NUL), type, rank, byte count
//   the n names, each NUL-terminated; then the n shapes, each `rank` i32 dimensions
//   u64 padding length, that many zero bytes (the values start on a 256-byte boundary)
//   the n items' bytes, in header order (Marian pads each to a multiple of 256 bytes)
// A model's configuration travels as the item "special:model.yml": YAML text, int8, with NUL.
// Torch-free, so that the fuzz harnesses and the importer share it.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace nmt {

/// The file version this code reads and writes (Marian's BINARY_FILE_VERSION).
constexpr uint64_t kMarianBinaryVersion = 1;

/// Marian's Type ids (src/common/types.h): a class bit (signed 0x100, float 0x400,
/// intgemm 0x4000) plus the element size in bytes.
enum class MarianType : uint64_t {
  int8 = 0x0101,
  int32 = 0x0104,
  float16 = 0x0402,
  float32 = 0x0404,
  intgemm8 = 0x4101,   ///< int8 weights quantized for intgemm (Bergamot's models)
  intgemm16 = 0x4102,
};

/// The name Marian gives a type ("float32", "intgemm8", ...), or "type 0x..." for one it does not know.
std::string marian_type_name(uint64_t type);

struct MarianItem {
  std::string name;
  MarianType type = MarianType::float32;
  std::vector<int32_t> shape;  ///< Marian's row-major shape, e.g. {1, 512} for a bias
  std::string bytes;           ///< the values, without Marian's padding

  int64_t elements() const;
};

/// The configuration item Marian reads a model's options from.
constexpr const char* kMarianModelConfigItem = "special:model.yml";
/// `yaml` as that item (int8, with its terminating NUL, as Marian writes it).
MarianItem marian_config_item(const std::string& yaml);
/// The YAML text of a config item (without the NUL).
std::string marian_config_text(const MarianItem& item);

/// A float32 matrix item as Marian's intgemm8 (Firefox Translations' models): int8 values
/// round(value * q), clamped to [-127, 127], q = 127 / max |value|, then q as a float; an
/// embedding (a name with "Wemb") stored as shaped, any other matrix transposed, as
/// marian-dev's loader expects (src/tensors/cpu/integer_common.h). Throws nmt::Error for an
/// item that is not a float32 matrix, or one of zeros.
MarianItem intgemm8_item(const MarianItem& matrix);

/// Writes the items to `sink` piece by piece. Throws nmt::Error for an empty or repeated
/// name, or bytes that do not match the shape and type.
void write_marian_binary(const std::vector<MarianItem>& items, const std::function<void(std::string_view)>& sink);

/// The items of a .bin file held in `file` (named `file_name` in errors). Throws nmt::Error
/// naming the file and, where it is one item's fault, the item: a wrong version, a header or
/// shape that runs past the end, a byte count too small for the shape, a repeated name.
/// Marian's padding is dropped: each item keeps elements() x element size bytes
/// (intgemm items keep every byte: their trailing quantization multiplier is part of them).
std::vector<MarianItem> read_marian_binary(std::string_view file, const std::string& file_name);

}  // namespace nmt
