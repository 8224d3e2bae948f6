#include "nmt/export/marian_format.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

#include "nmt/base/error.h"
#include "raw_bytes.h"

namespace nmt {

namespace {

constexpr uint64_t kMarianAlignment = 256;  // Marian aligns the values block and each item to it
constexpr uint64_t kMarianIntgemmClass = 0x4000;

struct MarianHeader {
  uint64_t name_length;  // with the NUL
  uint64_t type;
  uint64_t rank;
  uint64_t byte_count;
};
static_assert(sizeof(MarianHeader) == 32, "Marian's header is four u64");

uint64_t marian_element_size(uint64_t type) { return type & 0xFF; }

bool known_marian_type(uint64_t type) {
  switch (static_cast<MarianType>(type)) {
    case MarianType::int8:
    case MarianType::int32:
    case MarianType::float16:
    case MarianType::float32:
    case MarianType::intgemm8:
    case MarianType::intgemm16:
      return true;
  }
  return false;
}

uint64_t marian_padded(uint64_t bytes) { return (bytes + kMarianAlignment - 1) / kMarianAlignment * kMarianAlignment; }

// Reads the file front to back; every read is checked against what is left.
class MarianCursor {
 public:
  MarianCursor(std::string_view file, const std::string& file_name) : file_(file), file_name_(file_name) {}

  template <class T>
  T value(const std::string& what) {
    T result;
    std::memcpy(&result, take(sizeof(T), what).data(), sizeof(T));
    return result;
  }

  std::string_view take(uint64_t bytes, const std::string& what) {
    if (bytes > file_.size() - position_)
      throw Error(file_name_ + ": " + what + " runs past the end of the file (" + std::to_string(bytes) +
                  " bytes wanted at offset " + std::to_string(position_) + ", the file has " +
                  std::to_string(file_.size()) + "); the file is cut short or not a Marian .bin");
    const auto piece = file_.substr(position_, bytes);
    position_ += bytes;
    return piece;
  }

  uint64_t left() const { return file_.size() - position_; }

 private:
  std::string_view file_;
  const std::string& file_name_;
  uint64_t position_ = 0;
};

}  // namespace

std::string marian_type_name(uint64_t type) {
  switch (static_cast<MarianType>(type)) {
    case MarianType::int8: return "int8";
    case MarianType::int32: return "int32";
    case MarianType::float16: return "float16";
    case MarianType::float32: return "float32";
    case MarianType::intgemm8: return "intgemm8";
    case MarianType::intgemm16: return "intgemm16";
  }
  std::ostringstream text;
  text << "type 0x" << std::hex << type;
  return text.str();
}

int64_t MarianItem::elements() const {
  int64_t count = 1;
  for (const auto dimension : shape) count *= dimension;
  return count;
}

MarianItem marian_config_item(const std::string& yaml) {
  MarianItem item;
  item.name = kMarianModelConfigItem;
  item.type = MarianType::int8;
  item.bytes = yaml + '\0';
  item.shape = {static_cast<int32_t>(item.bytes.size())};
  return item;
}

std::string marian_config_text(const MarianItem& item) {
  const auto end = item.bytes.find('\0');
  return item.bytes.substr(0, end);
}

MarianItem intgemm8_item(const MarianItem& matrix) {
  if (matrix.type != MarianType::float32 || matrix.shape.size() != 2)
    throw Error("Marian model: item " + matrix.name + " is not a float32 matrix, so not quantized");
  const auto rows = static_cast<size_t>(matrix.shape[0]), columns = static_cast<size_t>(matrix.shape[1]);
  std::vector<float> values(rows * columns);
  std::memcpy(values.data(), matrix.bytes.data(), values.size() * sizeof(float));
  float largest = 0;
  for (const float value : values) largest = std::max(largest, std::fabs(value));
  if (!(largest > 0) || !std::isfinite(largest))
    throw Error("Marian model: item " + matrix.name + " cannot be quantized (largest magnitude " + std::to_string(largest) + ")");
  const float multiplier = 127.0f / largest;
  const bool transposed = matrix.name.find("Wemb") == std::string::npos;
  MarianItem item = matrix;
  item.type = MarianType::intgemm8;
  item.bytes.assign(values.size(), '\0');
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < columns; ++c) {
      const float scaled = std::nearbyint(values[r * columns + c] * multiplier);  // to nearest, as intgemm
      const auto quantized = static_cast<int8_t>(std::clamp(scaled, -127.0f, 127.0f));
      item.bytes[transposed ? c * rows + r : r * columns + c] = static_cast<char>(quantized);
    }
  item.bytes += raw_bytes(multiplier);
  return item;
}

void write_marian_binary(const std::vector<MarianItem>& items, const std::function<void(std::string_view)>& sink) {
  if (!host_is_little_endian()) throw Error("Marian model: writing needs a little-endian machine");
  std::set<std::string> names;
  std::string head = raw_bytes(kMarianBinaryVersion) + raw_bytes(static_cast<uint64_t>(items.size()));
  for (const auto& item : items) {
    if (item.name.empty()) throw Error("Marian model: an item without a name");
    if (!names.insert(item.name).second) throw Error("Marian model: item " + item.name + " twice");
    const auto type = static_cast<uint64_t>(item.type);
    if ((type & kMarianIntgemmClass) == 0 &&
        static_cast<uint64_t>(item.elements()) * marian_element_size(type) != item.bytes.size())
      throw Error("Marian model: item " + item.name + " has " + std::to_string(item.bytes.size()) +
                  " bytes for " + std::to_string(item.elements()) + " " + marian_type_name(type) + " values");
    head += raw_bytes(MarianHeader{item.name.size() + 1, type, item.shape.size(), marian_padded(item.bytes.size())});
  }
  for (const auto& item : items) head += item.name + '\0';
  for (const auto& item : items)
    for (const auto dimension : item.shape) head += raw_bytes(dimension);
  // The values start at the next 256-byte boundary after the padding count itself.
  const uint64_t values_start = (head.size() + sizeof(uint64_t)) / kMarianAlignment * kMarianAlignment + kMarianAlignment;
  const uint64_t padding = values_start - head.size() - sizeof(uint64_t);
  head += raw_bytes(padding) + std::string(padding, '\0');
  sink(head);
  for (const auto& item : items) {
    sink(item.bytes);
    sink(std::string(marian_padded(item.bytes.size()) - item.bytes.size(), '\0'));
  }
}

std::vector<MarianItem> read_marian_binary(std::string_view file, const std::string& file_name) {
  if (!host_is_little_endian()) throw Error(file_name + ": reading a Marian model needs a little-endian machine");
  MarianCursor cursor(file, file_name);
  const auto version = cursor.value<uint64_t>("the file version");
  if (version != kMarianBinaryVersion)
    throw Error(file_name + ": Marian binary file version " + std::to_string(version) + ", " +
                std::to_string(kMarianBinaryVersion) + " expected (is it a Marian .bin?)");
  const auto count = cursor.value<uint64_t>("the item count");
  if (count > cursor.left() / sizeof(MarianHeader))
    throw Error(file_name + ": " + std::to_string(count) + " items announced, more than the file can hold");
  std::vector<MarianHeader> headers(count);
  for (auto& header : headers) header = cursor.value<MarianHeader>("an item header");
  std::vector<MarianItem> items(count);
  std::set<std::string> names;
  for (uint64_t i = 0; i < count; ++i) {
    const auto what = "the name of item " + std::to_string(i + 1);
    if (headers[i].name_length == 0) throw Error(file_name + ": " + what + " has length 0");
    const auto name = cursor.take(headers[i].name_length, what);
    if (name.back() != '\0' || name.find('\0') != name.size() - 1)
      throw Error(file_name + ": " + what + " is not one NUL-terminated string");
    items[i].name = std::string(name.substr(0, name.size() - 1));
    if (!names.insert(items[i].name).second) throw Error(file_name + ": item " + items[i].name + " twice");
    if (!known_marian_type(headers[i].type))
      throw Error(file_name + ": item " + items[i].name + " has " + marian_type_name(headers[i].type) +
                  ", which we do not read (float32, float16, int8, int32, intgemm8, intgemm16)");
    items[i].type = static_cast<MarianType>(headers[i].type);
  }
  for (uint64_t i = 0; i < count; ++i) {
    const auto& name = items[i].name;
    if (headers[i].rank > 8) throw Error(file_name + ": item " + name + " has rank " + std::to_string(headers[i].rank));
    int64_t elements = 1;
    for (uint64_t d = 0; d < headers[i].rank; ++d) {
      const auto dimension = cursor.value<int32_t>("the shape of item " + name);
      if (dimension < 0 || (dimension > 0 && elements > std::numeric_limits<int64_t>::max() / 8 / dimension))
        throw Error(file_name + ": item " + name + " has dimension " + std::to_string(dimension));
      elements *= dimension;
      items[i].shape.push_back(dimension);
    }
  }
  const auto padding = cursor.value<uint64_t>("the padding length");
  cursor.take(padding, "the padding");
  for (uint64_t i = 0; i < count; ++i) {
    auto& item = items[i];
    const auto type = static_cast<uint64_t>(item.type);
    const auto bytes = cursor.take(headers[i].byte_count, "the values of item " + item.name);
    const auto needed = static_cast<uint64_t>(item.elements()) * marian_element_size(type);
    if (bytes.size() < needed)
      throw Error(file_name + ": item " + item.name + " has " + std::to_string(bytes.size()) + " bytes, its shape needs " +
                  std::to_string(needed));
    item.bytes = std::string((type & kMarianIntgemmClass) != 0 ? bytes : bytes.substr(0, needed));
  }
  return items;
}

}  // namespace nmt
