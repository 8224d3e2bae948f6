#pragma once
// CTranslate2's model.bin, binary version 6, as its loader reads it (src/models/model.cc of
// OpenNMT/CTranslate2 4.x; its Python converters write it in specs/model_spec.py). Written here
// from C++ because CTranslate2 ships no C++ writer and our users have no Python. All integers
// little-endian:
//   u32 binary version (6)
//   string spec name, u32 spec revision
//   u32 variable count, then per variable:
//     string name, u8 rank, rank x u32 dimensions, u8 data type, u32 byte count, the bytes
//   u32 alias count, then per alias: string alias, string name of the variable it stands for
// where a string is u16 (length + 1), the UTF-8 bytes, and a NUL byte.
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace nmt {

/// The binary version this writer produces (CTranslate2's CURRENT_BINARY_VERSION).
constexpr uint32_t kCtranslate2BinaryVersion = 6;

/// CTranslate2's DataType ids (include/ctranslate2/types.h), in its order.
enum class Ctranslate2DataType : uint8_t { float32 = 0, int8 = 1, int16 = 2, int32 = 3, float16 = 4, bfloat16 = 5 };

/// The id for a LibTorch dtype; throws nmt::Error for one CTranslate2 cannot store.
Ctranslate2DataType ctranslate2_data_type(torch::ScalarType dtype);

/// One named variable: a tensor (rank >= 1) or a scalar attribute (rank 0: a flag as int8,
/// a count as int16, a value as float32), held as a contiguous CPU tensor of its stored type.
struct Ctranslate2Variable {
  std::string name;  ///< "/"-separated scope, e.g. "encoder/layer_0/ffn/linear_0/weight"
  torch::Tensor value;
};

/// A second name for a variable already written (a tied or shared weight is stored once).
struct Ctranslate2Alias {
  std::string alias;
  std::string variable;
};

struct Ctranslate2Binary {
  std::string spec;        ///< e.g. "TransformerSpec"
  uint32_t revision = 1;   ///< the spec's revision
  std::vector<Ctranslate2Variable> variables;
  std::vector<Ctranslate2Alias> aliases;
};

/// Scalar attributes as CTranslate2's converters type them.
Ctranslate2Variable ctranslate2_flag(std::string name, bool value);
Ctranslate2Variable ctranslate2_int16(std::string name, int64_t value);

/// Writes `binary` to `sink` piece by piece (one variable's bytes at a time), variables sorted
/// by name as CTranslate2's converters write them. Throws nmt::Error for a name that is empty,
/// repeated or too long, an alias of a variable that is not there, or a value CTranslate2
/// cannot read back (a dimension or byte count over 32 bits).
void write_ctranslate2_binary(const Ctranslate2Binary& binary, const std::function<void(std::string_view)>& sink);

}  // namespace nmt
