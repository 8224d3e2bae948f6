#include "nmt/export/marian_npz.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <regex>

#include "nmt/base/error.h"
#include "raw_bytes.h"

namespace nmt {

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicLength = 6;
constexpr char kNpySuffix[] = ".npy";

struct ZipArchiveCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct ZipEntryCloser {
  void operator()(zip_file_t* entry) const { zip_fclose(entry); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipArchiveCloser>;

std::string zip_error_text(zip_error_t* error) {
  const std::string text = zip_error_strerror(error);
  zip_error_fini(error);
  return text;
}

// One .npy array's header fields.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int32_t> shape;
  size_t data_offset = 0;
};

NpyHeader npy_header(const std::string& bytes, const std::string& where) {
  if (bytes.size() < kNpyMagicLength + 4 || bytes.compare(0, kNpyMagicLength, kNpyMagic, kNpyMagicLength) != 0)
    throw Error(where + ": not a NumPy .npy array (no \\x93NUMPY magic)");
  const auto major = static_cast<uint8_t>(bytes[kNpyMagicLength]);
  size_t length = 0, start = 0;
  if (major == 1) {
    uint16_t short_length;
    std::memcpy(&short_length, bytes.data() + 8, 2);
    length = short_length, start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(where + ": a .npy header cut short");
    uint32_t long_length;
    std::memcpy(&long_length, bytes.data() + 8, 4);
    length = long_length, start = 12;
  } else {
    throw Error(where + ": .npy format version " + std::to_string(major) + " (1, 2 or 3 expected)");
  }
  if (length > bytes.size() - start) throw Error(where + ": a .npy header runs past the array's end");
  const std::string dict = bytes.substr(start, length);
  NpyHeader header;
  header.data_offset = start + length;
  std::smatch match;
  if (!std::regex_search(dict, match, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    throw Error(where + ": a .npy header without 'descr'");
  header.descr = match[1];
  if (!std::regex_search(dict, match, std::regex(R"('fortran_order'\s*:\s*(True|False))")))
    throw Error(where + ": a .npy header without 'fortran_order'");
  header.fortran_order = match[1] == "True";
  if (!std::regex_search(dict, match, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    throw Error(where + ": a .npy header without 'shape'");
  const std::string dims = match[1];
  const std::regex number(R"(\d+)");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number); it != std::sregex_iterator(); ++it) {
    const auto text = it->str();
    if (text.size() > 9) throw Error(where + ": dimension " + text + " is too large");
    header.shape.push_back(std::stoi(text));
  }
  return header;
}

MarianItem npy_item(std::string name, const std::string& bytes, const std::string& where) {
  const auto header = npy_header(bytes, where);
  if (header.fortran_order) throw Error(where + ": stored in Fortran order; Marian writes C order");
  MarianItem item;
  item.name = std::move(name);
  item.shape = header.shape;
  size_t element = 0;
  if (header.descr == "<f4") {
    item.type = MarianType::float32, element = 4;
  } else if (header.descr == "<f2") {
    item.type = MarianType::float16, element = 2;
  } else if (header.descr == "|i1" || header.descr == "|u1" || header.descr == "|S1" || header.descr == "|b1") {
    item.type = MarianType::int8, element = 1;
  } else {
    throw Error(where + ": dtype '" + header.descr + "'; float32 ('<f4'), float16 ('<f2') and bytes are read");
  }
  // The shape's product, checked against the data as it grows (no overflow on absurd shapes).
  const uint64_t available = (bytes.size() - header.data_offset) / element;
  uint64_t elements = 1;
  for (const auto dimension : item.shape) {
    if (dimension != 0 && elements > available / static_cast<uint64_t>(dimension))
      throw Error(where + ": " + std::to_string(bytes.size() - header.data_offset) +
                  " bytes of data, fewer than its shape needs");
    elements *= static_cast<uint64_t>(dimension);
  }
  item.bytes = bytes.substr(header.data_offset, elements * element);
  return item;
}

// The entry's bytes, read in pieces: memory follows what the entry really holds, not the size
// its directory claims (a damaged or hostile archive may claim gigabytes; fuzz_marian_npz found
// one), and the claim is checked against what came.
std::string zip_entry_bytes(zip_t* archive, zip_uint64_t index, const std::string& where) {
  zip_stat_t stat;
  if (zip_stat_index(archive, index, 0, &stat) != 0 || (stat.valid & ZIP_STAT_SIZE) == 0)
    throw Error(where + ": cannot read its size (" + std::string(zip_strerror(archive)) + ")");
  if (stat.size > std::numeric_limits<uint32_t>::max()) throw Error(where + ": an array over 4 GB");
  std::unique_ptr<zip_file_t, ZipEntryCloser> entry(zip_fopen_index(archive, index, 0));
  if (!entry) throw Error(where + ": cannot open (" + std::string(zip_strerror(archive)) + ")");
  std::string bytes;
  std::string piece(1 << 20, '\0');
  while (bytes.size() < stat.size) {
    const auto wanted = std::min<zip_uint64_t>(piece.size(), stat.size - bytes.size());
    const auto read = zip_fread(entry.get(), piece.data(), wanted);
    if (read < 0) throw Error(where + ": damaged (" + std::string(zip_file_strerror(entry.get())) + ")");
    if (read == 0) break;
    bytes.append(piece.data(), static_cast<size_t>(read));
  }
  if (bytes.size() != stat.size)
    throw Error(where + ": " + std::to_string(bytes.size()) + " bytes where its directory says " +
                std::to_string(stat.size) + "; the archive is damaged");
  return bytes;
}

std::string npy_bytes(const MarianItem& item) {
  const char* descr = item.type == MarianType::float32   ? "<f4"
                      : item.type == MarianType::float16 ? "<f2"
                      : item.type == MarianType::int8    ? "|i1"
                                                         : nullptr;
  if (descr == nullptr)
    throw Error("Marian model: item " + item.name + " is " + marian_type_name(static_cast<uint64_t>(item.type)) +
                "; an .npz holds float32, float16 and bytes here");
  // As NumPy writes a tuple, which Marian's cnpy parses by its commas: (2, 3), (5,).
  std::string shape;
  for (size_t i = 0; i < item.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(item.shape[i]);
  if (item.shape.size() == 1) shape += ",";
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                     shape + "), }";
  // Magic, version 1.0, length; the header padded with spaces to a multiple of 64, ending in \n.
  const size_t unpadded = kNpyMagicLength + 4 + dict.size() + 1;
  dict += std::string((64 - unpadded % 64) % 64, ' ') + '\n';
  return std::string(kNpyMagic, kNpyMagicLength) + '\x01' + '\x00' + raw_bytes(static_cast<uint16_t>(dict.size())) + dict +
         item.bytes;
}

}  // namespace

std::vector<MarianItem> read_marian_npz(std::string_view file, const std::string& file_name) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(file.data(), file.size(), 0, &error);
  if (source == nullptr) throw Error(file_name + ": " + zip_error_text(&error));
  ZipArchive archive(zip_open_from_source(source, ZIP_RDONLY, &error));
  if (!archive) {
    zip_source_free(source);
    throw Error(file_name + ": not a zip archive, so not an .npz (" + zip_error_text(&error) + ")");
  }
  zip_error_fini(&error);
  std::vector<MarianItem> items;
  const auto count = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* entry_name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), 0);
    std::string name = entry_name == nullptr ? "" : entry_name;
    const auto where = file_name + ": array " + name;
    if (name.size() <= std::strlen(kNpySuffix) || name.compare(name.size() - std::strlen(kNpySuffix), std::string::npos, kNpySuffix) != 0)
      throw Error(where + ": not a .npy entry");
    name.erase(name.size() - std::strlen(kNpySuffix));
    items.push_back(npy_item(name, zip_entry_bytes(archive.get(), static_cast<zip_uint64_t>(i), where), where));
  }
  return items;
}

std::string marian_npz_bytes(const std::vector<MarianItem>& items) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* output = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (output == nullptr) throw Error("Marian model: " + zip_error_text(&error));
  zip_source_keep(output);  // read back after the archive is closed
  std::unique_ptr<zip_source_t, void (*)(zip_source_t*)> kept(output, zip_source_free);
  ZipArchive archive(zip_open_from_source(output, ZIP_TRUNCATE, &error));
  if (!archive) throw Error("Marian model: cannot write an .npz (" + zip_error_text(&error) + ")");
  zip_error_fini(&error);
  std::vector<std::string> arrays;  // alive until the archive is written
  arrays.reserve(items.size());
  for (const auto& item : items) {
    arrays.push_back(npy_bytes(item));
    zip_source_t* data = zip_source_buffer(archive.get(), arrays.back().data(), arrays.back().size(), 0);
    const auto index = data == nullptr ? -1 : zip_file_add(archive.get(), (item.name + kNpySuffix).c_str(), data, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      if (data != nullptr) zip_source_free(data);
      throw Error("Marian model: cannot add " + item.name + " to the .npz (" + zip_strerror(archive.get()) + ")");
    }
    zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  if (zip_close(archive.get()) != 0)
    throw Error("Marian model: cannot write the .npz (" + std::string(zip_strerror(archive.get())) + ")");
  archive.release();  // closed
  if (zip_source_open(output) != 0) throw Error("Marian model: cannot read back the .npz");
  zip_source_seek(output, 0, SEEK_END);
  const auto size = zip_source_tell(output);
  zip_source_seek(output, 0, SEEK_SET);
  std::string bytes(static_cast<size_t>(size), '\0');
  const auto read = zip_source_read(output, bytes.data(), bytes.size());
  zip_source_close(output);
  if (read != size) throw Error("Marian model: cannot read back the .npz");
  return bytes;
}

}  // namespace nmt
