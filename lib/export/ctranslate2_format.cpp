#include "nmt/export/ctranslate2_format.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <set>

#include "nmt/base/error.h"
#include "raw_bytes.h"

namespace nmt {

namespace {

static_assert(sizeof(float) == 4, "CTranslate2 stores float32");

uint32_t checked_u32(int64_t value, const std::string& what) {
  if (value < 0 || value > std::numeric_limits<uint32_t>::max())
    throw Error("CTranslate2 model: " + what + " " + std::to_string(value) + " does not fit in 32 bits");
  return static_cast<uint32_t>(value);
}

std::string encoded_string(const std::string& text) {
  if (text.empty()) throw Error("CTranslate2 model: empty name");
  if (text.size() + 1 > std::numeric_limits<uint16_t>::max())
    throw Error("CTranslate2 model: name of " + std::to_string(text.size()) + " bytes is too long");
  return raw_bytes(static_cast<uint16_t>(text.size() + 1)) + text + '\0';
}

// A variable's header: name, rank, dimensions, data type, byte count.
std::string variable_header(const Ctranslate2Variable& variable, const torch::Tensor& value) {
  std::string header = encoded_string(variable.name);
  header += raw_bytes(static_cast<uint8_t>(value.dim()));
  for (const auto size : value.sizes()) header += raw_bytes(checked_u32(size, variable.name + ": dimension"));
  header += raw_bytes(static_cast<uint8_t>(ctranslate2_data_type(value.scalar_type())));
  header += raw_bytes(checked_u32(value.numel() * static_cast<int64_t>(value.element_size()), variable.name + ": bytes"));
  return header;
}

std::vector<const Ctranslate2Variable*> sorted_by_name(const std::vector<Ctranslate2Variable>& variables) {
  std::vector<const Ctranslate2Variable*> sorted;
  for (const auto& variable : variables) sorted.push_back(&variable);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i]->name == sorted[i - 1]->name) throw Error("CTranslate2 model: variable " + sorted[i]->name + " twice");
  return sorted;
}

void check_aliases(const Ctranslate2Binary& binary) {
  std::set<std::string> names;
  for (const auto& variable : binary.variables) names.insert(variable.name);
  for (const auto& alias : binary.aliases) {
    if (names.count(alias.variable) == 0)
      throw Error("CTranslate2 model: alias " + alias.alias + " names no variable (" + alias.variable + ")");
    if (!names.insert(alias.alias).second) throw Error("CTranslate2 model: " + alias.alias + " twice");
  }
}

}  // namespace

Ctranslate2DataType ctranslate2_data_type(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kFloat32: return Ctranslate2DataType::float32;
    case torch::kInt8: return Ctranslate2DataType::int8;
    case torch::kInt16: return Ctranslate2DataType::int16;
    case torch::kInt32: return Ctranslate2DataType::int32;
    case torch::kFloat16: return Ctranslate2DataType::float16;
    case torch::kBFloat16: return Ctranslate2DataType::bfloat16;
    default: throw Error(std::string("CTranslate2 model: no data type for ") + c10::toString(dtype));
  }
}

Ctranslate2Variable ctranslate2_flag(std::string name, bool value) {
  return {std::move(name), torch::scalar_tensor(value ? 1 : 0, torch::kInt8)};
}

Ctranslate2Variable ctranslate2_int16(std::string name, int64_t value) {
  if (value < std::numeric_limits<int16_t>::min() || value > std::numeric_limits<int16_t>::max())
    throw Error("CTranslate2 model: " + name + " = " + std::to_string(value) + " does not fit in 16 bits");
  return {std::move(name), torch::scalar_tensor(value, torch::kInt16)};
}

void write_ctranslate2_binary(const Ctranslate2Binary& binary, const std::function<void(std::string_view)>& sink) {
  if (!host_is_little_endian()) throw Error("CTranslate2 model: writing on a big-endian machine is not supported");
  const auto variables = sorted_by_name(binary.variables);
  check_aliases(binary);
  sink(raw_bytes(kCtranslate2BinaryVersion) + encoded_string(binary.spec) + raw_bytes(binary.revision) +
       raw_bytes(checked_u32(static_cast<int64_t>(variables.size()), "variable count")));
  for (const auto* variable : variables) {
    const auto value = variable->value.to(torch::kCPU).contiguous();
    sink(variable_header(*variable, value));
    sink(std::string_view(static_cast<const char*>(value.data_ptr()),
                          static_cast<size_t>(value.numel()) * value.element_size()));
  }
  sink(raw_bytes(checked_u32(static_cast<int64_t>(binary.aliases.size()), "alias count")));
  for (const auto& alias : binary.aliases) sink(encoded_string(alias.alias) + encoded_string(alias.variable));
}

}  // namespace nmt
