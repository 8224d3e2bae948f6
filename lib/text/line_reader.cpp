#include "nmt/text/line_reader.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "nmt/base/error.h"

namespace nmt {
namespace {

// A cut inside a multi-byte character would leave invalid UTF-8: back off to its start.
size_t character_boundary(const std::string& text, size_t cut) {
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

LineReader::LineReader(std::istream& in, std::string name, size_t max_bytes, Overlong overlong)
    : in_(in), name_(std::move(name)), max_bytes_(max_bytes), overlong_(overlong) {
  if (max_bytes_ == 0) throw Error("LineReader: the byte limit must be positive");
}

bool LineReader::next(std::string& line) {
  line.clear();
  dropped_ = kept_ = 0;
  // std::getline would hold the whole line: read it in chunks and keep max_bytes_ + 4 (a
  // character's worth more, to find its boundary and a "\r").
  char chunk[8192];
  bool read_any = false, ended = false;
  size_t total = 0;
  errno = 0;
  while (!ended) {
    in_.getline(chunk, sizeof chunk);
    auto extracted = static_cast<size_t>(in_.gcount());
    if (in_.bad() || (&in_ == &std::cin && std::ferror(stdin)))
      throw Error("cannot read " + name_ + ": " + (errno != 0 ? std::strerror(errno) : "read error"));
    if (in_.eof()) {
      ended = true;  // the last line has no "\n"
    } else if (in_.fail()) {
      in_.clear();  // the chunk filled up before the "\n": the line goes on
    } else {
      ended = true;
      --extracted;  // the "\n", extracted but not stored
    }
    read_any = read_any || extracted > 0 || !in_.eof();
    const size_t room = max_bytes_ + 4 > line.size() ? max_bytes_ + 4 - line.size() : 0;
    line.append(chunk, std::min(extracted, room));
    total += extracted;
  }
  if (!read_any) return false;
  ++number_;
  if (!line.empty() && line.back() == '\r' && total == line.size()) {
    line.pop_back();
    --total;
  }
  if (total <= max_bytes_) {
    line.resize(std::min(line.size(), total));
    kept_ = line.size();
    return true;
  }
  if (overlong_ == Overlong::refuse)
    throw Error(at_line(name_, number_, "a line of " + std::to_string(total) + " bytes, more than the " +
                                            std::to_string(max_bytes_) + " a line may hold"));
  line.resize(character_boundary(line, max_bytes_));
  dropped_ = total - line.size();
  kept_ = line.size();
  return true;
}

std::string cut_warning(const LineReader& reader) {
  return "only the first " + std::to_string(reader.kept()) + " of its " +
         std::to_string(reader.kept() + reader.dropped()) + " bytes read";
}

}  // namespace nmt
