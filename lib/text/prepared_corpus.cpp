// Reading a prepared corpus: verify every section, map the index, pread the ids.
#include "nmt/text/prepared_corpus.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nmt/base/error.h"
#include "nmt/base/sealed_file.h"
#include "nmt/text/tokenizer.h"
#include "mapping_guard.h"
#include "prepared_format.h"

namespace nmt {
namespace {

using prepared_format::Header;

int64_t nanoseconds(const timespec& time) { return int64_t{time.tv_sec} * 1000000000 + time.tv_nsec; }

PreparedCorpus::FileState file_state(const struct stat& status) {
  return {static_cast<uint64_t>(status.st_size), nanoseconds(status.st_mtim), nanoseconds(status.st_ctim)};
}

void pread_exactly(int fd, void* buffer, size_t bytes, uint64_t offset, const std::string& path) {
  auto* out = static_cast<char*>(buffer);
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd, out + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0) throw Error(path + " is truncated");
    done += static_cast<size_t>(n);
  }
}

// CRC-32 of a section, read with pread in slices: through the page cache, not the mapping,
// so that checking a large file does not count it in the process's resident memory.
uint32_t section_crc(int fd, uint64_t offset, uint64_t bytes, const std::string& path) {
  std::vector<unsigned char> buffer(std::min<uint64_t>(bytes, 4u << 20));
  uLong crc = crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < bytes;) {
    const auto slice = static_cast<size_t>(std::min<uint64_t>(buffer.size(), bytes - done));
    pread_exactly(fd, buffer.data(), slice, offset + done, path);
    crc = crc32(crc, buffer.data(), static_cast<uInt>(slice));
    done += slice;
  }
  return static_cast<uint32_t>(crc);
}

PreparedSource source_from_json(const nlohmann::json& j) {
  return {j.at("path").get<std::string>(), j.at("bytes").get<uint64_t>(), j.at("modified_ns").get<int64_t>()};
}

PreparedCorpusInfo info_from_json(const nlohmann::json& j) {
  PreparedCorpusInfo info;
  info.source = source_from_json(j.at("source"));
  info.target = source_from_json(j.at("target"));
  info.source_tokenizer_crc = j.at("source_tokenizer_crc32").get<uint32_t>();
  info.target_tokenizer_crc = j.at("target_tokenizer_crc32").get<uint32_t>();
  info.total_lines = j.at("total_lines").get<uint64_t>();
  info.pairs = j.at("pairs").get<uint64_t>();
  info.empty_skipped = j.at("empty_skipped").get<uint64_t>();
  info.too_long_skipped = j.at("too_long_skipped").get<uint64_t>();
  return info;
}

Header read_header(int fd, uint64_t file_bytes, const std::string& path) {
  const std::string foreign = path + " is not a prepared corpus (nmt-prepare and nmt-train write them)";
  Header header{};
  if (file_bytes < sizeof header) throw Error(foreign + " or is truncated: " + std::to_string(file_bytes) + " bytes");
  pread_exactly(fd, &header, sizeof header, 0, path);
  if (std::memcmp(header.magic, prepared_format::kMagic, sizeof header.magic) != 0) throw Error(foreign);
  if (header.byte_order != prepared_format::kByteOrder)
    throw Error(path + " was prepared on a machine of the other byte order: prepare it again here");
  if (header.version != prepared_format::kVersion)
    throw Error(path + " is a prepared corpus of format version " + std::to_string(header.version) +
                "; this nmt reads version " + std::to_string(prepared_format::kVersion) + ": prepare it again");
  Header unsealed = header;
  unsealed.header_crc = 0;
  if (crc32_of(std::string_view(reinterpret_cast<const char*>(&unsealed), sizeof unsealed)) != header.header_crc)
    throw Error(path + " is corrupted (header checksum mismatch)");
  if (header.file_bytes != file_bytes)
    throw Error(path + " is truncated or was extended: " + std::to_string(file_bytes) + " bytes, its header says " +
                std::to_string(header.file_bytes));
  if (header.id_bytes != 2 && header.id_bytes != 4) throw Error(path + " is corrupted (id width)");
  return header;
}

}  // namespace

std::shared_ptr<const PreparedCorpus> PreparedCorpus::open(const std::string& path) {
  std::shared_ptr<PreparedCorpus> corpus(new PreparedCorpus());
  corpus->path_ = path;
  corpus->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (corpus->fd_ < 0) throw Error("cannot open prepared corpus " + path + ": " + std::strerror(errno));
  struct stat status {};
  if (::fstat(corpus->fd_, &status) != 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) throw Error(path + " is not a regular file");
  corpus->opened_ = file_state(status);
  const auto file_bytes = static_cast<uint64_t>(status.st_size);
  const auto header = read_header(corpus->fd_, file_bytes, path);
  const uint64_t pairs = header.pairs, ids = header.ids;
  struct Section {
    uint64_t offset, bytes;
    uint32_t crc;
    const char* name;
  };
  const Section sections[] = {
      {header.ids_offset, ids * header.id_bytes, header.ids_crc, "ids"},
      {header.source_lengths_offset, pairs * 2, header.source_lengths_crc, "source lengths"},
      {header.target_lengths_offset, pairs * 2, header.target_lengths_crc, "target lengths"},
      {header.id_offsets_offset, pairs * 8, header.id_offsets_crc, "id offsets"},
      {header.line_numbers_offset, pairs * 8, header.line_numbers_crc, "line numbers"},
      {header.metadata_offset, header.metadata_bytes, header.metadata_crc, "metadata"}};
  for (const auto& section : sections) {
    if (pairs > file_bytes || section.offset > file_bytes || section.bytes > file_bytes - section.offset ||
        section.offset % 8 != 0)
      throw Error(path + " is corrupted (the " + std::string(section.name) + " lie outside the file)");
    if (section_crc(corpus->fd_, section.offset, section.bytes, path) != section.crc)
      throw Error(path + " is corrupted (checksum mismatch in the " + section.name + ")");
  }
  std::string metadata(header.metadata_bytes, '\0');
  pread_exactly(corpus->fd_, metadata.data(), metadata.size(), header.metadata_offset, path);
  try {
    corpus->info_ = info_from_json(nlohmann::json::parse(metadata));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + " is corrupted (metadata: " + e.what() + ")");
  }
  if (corpus->info_.pairs != pairs) throw Error(path + " is corrupted (pair counts disagree)");
  corpus->mapping_bytes_ = file_bytes;
  corpus->mapping_ = ::mmap(nullptr, file_bytes, PROT_READ, MAP_SHARED, corpus->fd_, 0);
  if (corpus->mapping_ == MAP_FAILED) {
    corpus->mapping_ = nullptr;
    throw Error("cannot map " + path + ": " + std::strerror(errno));
  }
  text_detail::guard_mapping(corpus->mapping_, file_bytes, path);
  // Written while the sections were checked: what was checked is not what is mapped.
  corpus->require_unchanged();
  const auto* base = static_cast<const char*>(corpus->mapping_);
  corpus->pairs_ = static_cast<size_t>(pairs);
  corpus->id_bytes_ = static_cast<int>(header.id_bytes);
  corpus->ids_offset_ = header.ids_offset;
  corpus->ids_crc_ = header.ids_crc;
  corpus->ids_ = ids;
  corpus->source_lengths_ = reinterpret_cast<const uint16_t*>(base + header.source_lengths_offset);
  corpus->target_lengths_ = reinterpret_cast<const uint16_t*>(base + header.target_lengths_offset);
  corpus->id_offsets_ = reinterpret_cast<const uint64_t*>(base + header.id_offsets_offset);
  corpus->line_numbers_ = reinterpret_cast<const uint64_t*>(base + header.line_numbers_offset);
  return corpus;
}

PreparedCorpus::~PreparedCorpus() {
  if (mapping_ != nullptr) {
    text_detail::unguard_mapping(mapping_);
    ::munmap(mapping_, mapping_bytes_);
  }
  if (fd_ >= 0) ::close(fd_);
}

void PreparedCorpus::require_unchanged() const {
  struct stat status {};
  if (::fstat(fd_, &status) != 0) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
  if (!(file_state(status) == opened_))
    throw Error(path_ + " changed while this run read it (written by another process since it was checked); the run "
                        "stops here: restore or prepare it again, then resume");
}

void PreparedCorpus::read(size_t pair, std::vector<int>& source, std::vector<int>& target) const {
  // Before the index is touched (a truncated file would fault there) and after the ids are
  // read (a writer changes the times before the bytes): either way, never unchecked data.
  require_unchanged();
  const size_t source_count = source_lengths_[pair], target_count = target_lengths_[pair];
  const uint64_t first = id_offsets_[pair], count = source_count + target_count;
  if (first > ids_ || count > ids_ - first)
    throw Error(path_ + " is corrupted (pair " + std::to_string(pair) + " lies outside the ids)");
  thread_local std::vector<unsigned char> buffer;
  buffer.resize(count * static_cast<size_t>(id_bytes_));
  try {
    pread_exactly(fd_, buffer.data(), buffer.size(), ids_offset_ + first * id_bytes_, path_);
  } catch (const Error&) {
    require_unchanged();  // a file cut short by a writer (cp truncates first): say that it changed
    throw;
  }
  id_bytes_read_ += buffer.size();
  auto id_at = [&](size_t i) -> int {
    if (id_bytes_ == 2) {
      uint16_t id;
      std::memcpy(&id, buffer.data() + 2 * i, 2);
      return id;
    }
    uint32_t id;
    std::memcpy(&id, buffer.data() + 4 * i, 4);
    return static_cast<int>(id);
  };
  require_unchanged();
  source.resize(source_count);
  target.resize(target_count);
  for (size_t i = 0; i < source_count; ++i) source[i] = id_at(i);
  for (size_t i = 0; i < target_count; ++i) target[i] = id_at(source_count + i);
}

PreparedSource describe_source(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
  PreparedSource source;
  source.path = std::filesystem::absolute(path).lexically_normal().string();
  source.bytes = static_cast<uint64_t>(status.st_size);
  source.modified_ns = static_cast<int64_t>(status.st_mtim.tv_sec) * 1000000000LL + status.st_mtim.tv_nsec;
  return source;
}

std::string source_change(const PreparedSource& then, const PreparedSource& now) {
  if (then.path != now.path) return "it was prepared from " + then.path + ", not " + now.path;
  if (then.bytes != now.bytes)
    return now.path + " changed since it was prepared (" + std::to_string(then.bytes) + " bytes then, " +
           std::to_string(now.bytes) + " now)";
  if (then.modified_ns != now.modified_ns) return now.path + " was modified since it was prepared";
  return {};
}

std::string tokenizer_mismatch_reason(const PreparedCorpusInfo& info, const Tokenizer& source_tokenizer,
                                      const Tokenizer& target_tokenizer) {
  if (crc32_of(source_tokenizer.serialized()) != info.source_tokenizer_crc)
    return "it was prepared with another source tokenizer";
  if (crc32_of(target_tokenizer.serialized()) != info.target_tokenizer_crc)
    return "it was prepared with another target tokenizer";
  return {};
}

std::string mismatch_reason(const PreparedCorpusInfo& info, const PreparedSource& source,
                            const PreparedSource& target, const Tokenizer& source_tokenizer,
                            const Tokenizer& target_tokenizer) {
  if (auto reason = source_change(info.source, source); !reason.empty()) return reason;
  if (auto reason = source_change(info.target, target); !reason.empty()) return reason;
  return tokenizer_mismatch_reason(info, source_tokenizer, target_tokenizer);
}

std::string describe(const PrepareReport& report) {
  const auto& info = report.info;
  auto lines = [](const std::vector<uint64_t>& numbers, uint64_t count) {
    if (numbers.empty()) return std::string();
    std::string list = numbers.size() == 1 ? ": line " : ": lines ";
    for (size_t i = 0; i < numbers.size(); ++i) list += (i ? ", " : "") + std::to_string(numbers[i]);
    return list + (count > numbers.size() ? ", ..." : "");
  };
  std::ostringstream out;
  out << info.total_lines << " lines -> " << info.pairs << " pairs (skipped " << info.empty_skipped << " empty"
      << lines(report.first_empty_lines, info.empty_skipped) << "; " << info.too_long_skipped << " over "
      << kMaxPreparedTokens << " tokens" << lines(report.first_too_long_lines, info.too_long_skipped) << ")";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", report.seconds);
  out << " in " << seconds << " s";
  return out.str();
}

}  // namespace nmt
