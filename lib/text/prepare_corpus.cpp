// Writing a prepared corpus: read both files in chunks, tokenize the chunks of a round
// on all threads, append them in order; the index goes to unlinked scratch files and is
// copied after the ids, so memory stays flat whatever the corpus size.
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/base/sealed_file.h"
#include "nmt/text/corpus.h"
#include "nmt/text/encoding_check.h"
#include "nmt/text/line_reader.h"
#include "nmt/text/parallel_lines.h"
#include "nmt/text/prepared_corpus.h"
#include "nmt/text/tokenizer.h"
#include "prepared_format.h"

namespace nmt {
namespace {

constexpr size_t kChunkLines = 4096;
constexpr size_t kListedSkips = 5;

// A file written through a buffer, with the CRC-32 and the size of what went in.
// `name` (the prepared corpus's path) is what errors name.
class SectionWriter {
 public:
  SectionWriter(int fd, std::string name) : fd_(fd), name_(std::move(name)) { buffer_.reserve(kBuffer); }
  void append(const void* data, size_t bytes) {
    crc_ = crc32(crc_, static_cast<const Bytef*>(data), static_cast<uInt>(bytes));
    bytes_ += bytes;
    const auto* in = static_cast<const char*>(data);
    buffer_.insert(buffer_.end(), in, in + bytes);
    if (buffer_.size() >= kBuffer) flush();
  }
  void flush() {
    size_t done = 0;
    while (done < buffer_.size()) {
      const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error("cannot write " + name_ + ": " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    buffer_.clear();
  }
  uint32_t crc() const { return static_cast<uint32_t>(crc_); }
  uint64_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kBuffer = 1u << 20;
  int fd_;
  std::string name_;
  std::vector<char> buffer_;
  uLong crc_ = crc32(0L, Z_NULL, 0);
  uint64_t bytes_ = 0;
};

// A scratch file beside the output, unlinked at once: nothing is left if we are killed.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& beside) {
    const auto path = temporary_path_for(beside);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ < 0) throw Error("cannot write " + beside + ": " + std::strerror(errno));
    ::unlink(path.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() { ::close(fd_); }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// The output under a temporary name until commit(); removed if never committed. Not an
// AtomicFileWriter: the sections are written through the descriptor and the header last,
// in place (pwrite); but a symbolic link is followed as there (its target is replaced).
class OutputFile {
 public:
  explicit OutputFile(const std::string& path)
      : path_(resolve_write_target(path)), temporary_(temporary_path_for(path_)) {
    fd_ = ::open(temporary_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
    hold_while_writing(fd_);  // a later preparation tells a killed one's leftover by this
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temporary_.c_str());
  }
  int fd() const { return fd_; }
  void commit() {
    int failure = ::fsync(fd_) == 0 ? 0 : errno;
    if (::close(fd_) != 0 && failure == 0) failure = errno;
    fd_ = -1;
    if (failure == 0 && std::rename(temporary_.c_str(), path_.c_str()) != 0) failure = errno;
    if (failure != 0) throw Error("cannot write " + path_ + ": " + std::strerror(failure));
    committed_ = true;
  }

 private:
  std::string path_, temporary_;
  int fd_ = -1;
  bool committed_ = false;
};

// Lines read from both files and what the tokenizers made of them.
struct Chunk {
  uint64_t first_line = 0;  // 1-based
  std::vector<std::string> source, target;
  std::vector<uint8_t> overlong;  // per pair: a side was cut at LineReader::kDefaultMaxBytes
  std::vector<uint32_t> ids;  // both sides of each kept pair
  std::vector<uint16_t> source_lengths, target_lengths;
  std::vector<uint64_t> line_numbers;
  std::vector<uint64_t> empty_lines, too_long_lines;  // the first few
  uint64_t empty = 0, too_long = 0;
  std::string error;  // the first bad line of the chunk, "file:line: ..."
};

void tokenize(Chunk& chunk, const PrepareOptions& o) {
  for (size_t i = 0; i < chunk.source.size(); ++i) {
    const uint64_t line = chunk.first_line + i;
    for (const auto& [text, path] : {std::pair{&chunk.source[i], &o.source_path}, std::pair{&chunk.target[i], &o.target_path}}) {
      if (auto problem = utf8_problem(*text); !problem.empty()) {
        chunk.error = at_line(*path, static_cast<long>(line), problem) + conversion_hint(problem, *path);
        return;
      }
    }
    if (is_blank(chunk.source[i]) || is_blank(chunk.target[i])) {
      if (chunk.empty_lines.size() < kListedSkips) chunk.empty_lines.push_back(line);
      ++chunk.empty;
      continue;
    }
    if (chunk.overlong[i]) {  // never tokenized: it would not fit in kMaxPreparedTokens anyway
      if (chunk.too_long_lines.size() < kListedSkips) chunk.too_long_lines.push_back(line);
      ++chunk.too_long;
      continue;
    }
    const auto source = o.source_tokenizer->encode(chunk.source[i]);
    const auto target = o.target_tokenizer->encode(chunk.target[i]);
    if (source.size() > kMaxPreparedTokens || target.size() > kMaxPreparedTokens) {
      if (chunk.too_long_lines.size() < kListedSkips) chunk.too_long_lines.push_back(line);
      ++chunk.too_long;
      continue;
    }
    chunk.ids.insert(chunk.ids.end(), source.begin(), source.end());
    chunk.ids.insert(chunk.ids.end(), target.begin(), target.end());
    chunk.source_lengths.push_back(static_cast<uint16_t>(source.size()));
    chunk.target_lengths.push_back(static_cast<uint16_t>(target.size()));
    chunk.line_numbers.push_back(line);
  }
  chunk.source.clear(), chunk.source.shrink_to_fit();
  chunk.overlong.clear();
  chunk.target.clear(), chunk.target.shrink_to_fit();
}

// Both files in chunks of up to kChunkLines pairs (text/parallel_lines.h reads them in step).
class PairReader {
 public:
  PairReader(const std::string& source_path, const std::string& target_path) : lines_(source_path, target_path) {}
  // Up to kChunkLines pairs; false at the end of both files.
  bool fill(Chunk& chunk) {
    chunk.first_line = lines_.lines() + 1;
    std::string source_line, target_line;
    while (chunk.source.size() < kChunkLines && lines_.next(source_line, target_line)) {
      // Over-long lines are cut (and their pair skipped as too long), so memory stays bounded.
      chunk.overlong.push_back(lines_.cut());
      chunk.source.push_back(std::move(source_line));
      chunk.target.push_back(std::move(target_line));
    }
    return !chunk.source.empty();
  }
  uint64_t lines() const { return lines_.lines(); }
  // How far through the source file, for the ETA.
  double fraction(uint64_t total_bytes) { return lines_.fraction(total_bytes); }

 private:
  ParallelLines lines_;
};

void write_bytes(int fd, const void* data, size_t bytes, const std::string& path) {
  const auto* in = static_cast<const char*>(data);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::write(fd, in + done, bytes - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

// Zeros up to the next multiple of 8, where the next section starts.
uint64_t pad_to_8(int fd, uint64_t position, const std::string& path) {
  static const char zeros[8] = {};
  const auto aligned = prepared_format::align8(position);
  write_bytes(fd, zeros, aligned - position, path);
  return aligned;
}

std::string format_duration(double seconds) {
  const auto total = static_cast<long>(std::lround(seconds));
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
  return text;
}

nlohmann::json to_json(const PreparedSource& source) {
  return {{"path", source.path}, {"bytes", source.bytes}, {"modified_ns", source.modified_ns}};
}

// Copies a scratch section into the output after the ids.
void append_scratch(const ScratchFile& scratch, SectionWriter& out, const std::string& path) {
  std::vector<char> buffer(1u << 20);
  if (::lseek(scratch.fd(), 0, SEEK_SET) != 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
  for (;;) {
    const ssize_t n = ::read(scratch.fd(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("cannot write " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    out.append(buffer.data(), static_cast<size_t>(n));
  }
}

}  // namespace

PrepareReport prepare_corpus(const PrepareOptions& o) {
  if (o.source_tokenizer == nullptr || o.target_tokenizer == nullptr) throw Error("prepare_corpus: no tokenizers");
  const auto started = std::chrono::steady_clock::now();
  auto seconds_since = [&](std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  };
  PrepareReport report;
  auto& info = report.info;
  info.source = describe_source(o.source_path);
  info.target = describe_source(o.target_path);
  info.source_tokenizer_crc = crc32_of(o.source_tokenizer->serialized());
  info.target_tokenizer_crc = crc32_of(o.target_tokenizer->serialized());
  const int id_bytes = std::max(o.source_tokenizer->vocab_size(), o.target_tokenizer->vocab_size()) <= 65536 ? 2 : 4;

  PairReader reader(o.source_path, o.target_path);
  for (const auto& left : remove_stale_temporaries_of(o.output_path))  // of a preparation killed earlier
    if (o.log) o.log("removed " + left + " (left by an interrupted preparation)");
  OutputFile output(o.output_path);
  ScratchFile source_lengths(o.output_path), target_lengths(o.output_path), id_offsets(o.output_path),
      line_numbers(o.output_path);
  SectionWriter ids(output.fd(), o.output_path), source_lengths_out(source_lengths.fd(), o.output_path),
      target_lengths_out(target_lengths.fd(), o.output_path), id_offsets_out(id_offsets.fd(), o.output_path),
      line_numbers_out(line_numbers.fd(), o.output_path);
  prepared_format::Header header{};
  write_bytes(output.fd(), &header, sizeof header, o.output_path);  // rewritten at the end
  uint64_t id_count = 0;
  const int threads = std::max(1, o.threads);
  auto last_progress = started;
  for (bool more = true; more;) {
    std::vector<Chunk> round(static_cast<size_t>(threads));
    size_t filled = 0;
    while (filled < round.size() && (more = reader.fill(round[filled]))) ++filled;
    std::vector<std::thread> workers;
    for (size_t c = 1; c < filled; ++c) workers.emplace_back(tokenize, std::ref(round[c]), std::cref(o));
    std::exception_ptr failure;
    try {
      if (filled > 0) tokenize(round[0], o);
    } catch (...) {
      failure = std::current_exception();
    }
    for (auto& worker : workers) worker.join();
    if (failure) std::rethrow_exception(failure);
    for (size_t c = 0; c < filled; ++c) {
      auto& chunk = round[c];
      if (!chunk.error.empty()) throw Error(chunk.error);
      for (size_t pair = 0; pair < chunk.source_lengths.size(); ++pair) {
        id_offsets_out.append(&id_count, sizeof id_count);
        id_count += chunk.source_lengths[pair] + chunk.target_lengths[pair];
      }
      if (id_bytes == 2) {
        std::vector<uint16_t> narrow(chunk.ids.begin(), chunk.ids.end());
        ids.append(narrow.data(), narrow.size() * 2);
      } else {
        ids.append(chunk.ids.data(), chunk.ids.size() * 4);
      }
      source_lengths_out.append(chunk.source_lengths.data(), chunk.source_lengths.size() * 2);
      target_lengths_out.append(chunk.target_lengths.data(), chunk.target_lengths.size() * 2);
      line_numbers_out.append(chunk.line_numbers.data(), chunk.line_numbers.size() * 8);
      info.pairs += chunk.source_lengths.size();
      info.empty_skipped += chunk.empty;
      info.too_long_skipped += chunk.too_long;
      for (const auto line : chunk.empty_lines)
        if (report.first_empty_lines.size() < kListedSkips) report.first_empty_lines.push_back(line);
      for (const auto line : chunk.too_long_lines)
        if (report.first_too_long_lines.size() < kListedSkips) report.first_too_long_lines.push_back(line);
    }
    if (o.log && seconds_since(last_progress) >= o.progress_every_seconds) {
      last_progress = std::chrono::steady_clock::now();
      const double elapsed = seconds_since(started), fraction = reader.fraction(info.source.bytes);
      const double rate = double(reader.lines()) / std::max(elapsed, 1e-9);
      o.log("preparing " + o.output_path + ": " + std::to_string(reader.lines()) + " lines, " +
            std::to_string(static_cast<long>(rate)) + " lines/s, " + std::to_string(static_cast<int>(fraction * 100)) +
            "%, ETA " + format_duration(fraction > 0 ? elapsed * (1 - fraction) / fraction : 0));
    }
  }
  info.total_lines = reader.lines();
  ids.flush();
  for (auto* section : {&source_lengths_out, &target_lengths_out, &id_offsets_out, &line_numbers_out}) section->flush();
  std::memcpy(header.magic, prepared_format::kMagic, sizeof header.magic);
  header.version = prepared_format::kVersion;
  header.byte_order = prepared_format::kByteOrder;
  header.id_bytes = static_cast<uint32_t>(id_bytes);
  header.pairs = info.pairs;
  header.ids = id_count;
  header.ids_offset = sizeof header;
  header.ids_crc = ids.crc();
  uint64_t position = pad_to_8(output.fd(), sizeof header + ids.bytes(), o.output_path);
  struct Copied {
    const ScratchFile* scratch;
    uint64_t* offset;
    uint32_t* crc;
  };
  for (const auto& copied : {Copied{&source_lengths, &header.source_lengths_offset, &header.source_lengths_crc},
                             Copied{&target_lengths, &header.target_lengths_offset, &header.target_lengths_crc},
                             Copied{&id_offsets, &header.id_offsets_offset, &header.id_offsets_crc},
                             Copied{&line_numbers, &header.line_numbers_offset, &header.line_numbers_crc}}) {
    SectionWriter section(output.fd(), o.output_path);
    append_scratch(*copied.scratch, section, o.output_path);
    section.flush();
    *copied.offset = position;
    *copied.crc = section.crc();
    position = pad_to_8(output.fd(), position + section.bytes(), o.output_path);
  }
  const auto metadata = nlohmann::json{{"format", "nmt prepared corpus"},
                                       {"source", to_json(info.source)},
                                       {"target", to_json(info.target)},
                                       {"source_tokenizer_crc32", info.source_tokenizer_crc},
                                       {"target_tokenizer_crc32", info.target_tokenizer_crc},
                                       {"total_lines", info.total_lines},
                                       {"pairs", info.pairs},
                                       {"empty_skipped", info.empty_skipped},
                                       {"too_long_skipped", info.too_long_skipped},
                                       {"max_tokens", kMaxPreparedTokens}}
                            .dump(2) + "\n";
  write_bytes(output.fd(), metadata.data(), metadata.size(), o.output_path);
  header.metadata_offset = position;
  header.metadata_bytes = metadata.size();
  header.metadata_crc = crc32_of(metadata);
  header.file_bytes = position + metadata.size();
  header.header_crc = crc32_of(std::string_view(reinterpret_cast<const char*>(&header), sizeof header));
  if (::pwrite(output.fd(), &header, sizeof header, 0) != static_cast<ssize_t>(sizeof header))
    throw Error("cannot write " + o.output_path + ": " + std::strerror(errno));
  output.commit();
  report.seconds = seconds_since(started);
  return report;
}

}  // namespace nmt
