#include "nmt/text/corpus.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "nmt/base/error.h"
#include "nmt/text/encoding_check.h"
#include "nmt/text/line_reader.h"
#include "nmt/text/parallel_lines.h"

namespace nmt {
namespace {

// Length of the UTF-8 sequence starting with `lead`, 0 if `lead` cannot start one.
int sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Checks continuation bytes, overlong forms and surrogates (RFC 3629).
bool valid_sequence(const unsigned char* s, int length) {
  for (int i = 1; i < length; ++i)
    if ((s[i] & 0xC0) != 0x80) return false;
  if (length == 3) {
    if (s[0] == 0xE0 && s[1] < 0xA0) return false;  // overlong
    if (s[0] == 0xED && s[1] > 0x9F) return false;  // surrogate
  }
  if (length == 4) {
    if (s[0] == 0xF0 && s[1] < 0x90) return false;  // overlong
    if (s[0] == 0xF4 && s[1] > 0x8F) return false;  // above U+10FFFF
  }
  return true;
}

std::string hex_byte(unsigned char byte) {
  static const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[byte >> 4] + digits[byte & 15];
}

}  // namespace

std::string utf8_problem(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    if (bytes[i] == 0) return "NUL byte at byte " + std::to_string(i + 1);
    const int length = sequence_length(bytes[i]);
    if (length == 0 || i + length > text.size() || !valid_sequence(bytes + i, length))
      return "invalid UTF-8 byte " + hex_byte(bytes[i]) + " at byte " + std::to_string(i + 1);
    i += length;
  }
  return {};
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t") == std::string::npos;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  if (line.empty()) return fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    fields.push_back(line.substr(start, tab - start));
  fields.push_back(line.substr(start));
  return fields;
}

std::vector<std::string> read_lines(std::istream& in, const std::string& name, bool check_utf8) {
  std::vector<std::string> lines;
  std::string line;
  LineReader reader(in, name);
  while (reader.next(line)) {
    if (check_utf8) {
      if (auto problem = utf8_problem(line); !problem.empty())
        throw Error(at_line(name, reader.number(), problem) + conversion_hint(problem, name));
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<std::string> read_text_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + ": " + std::strerror(errno));
  return read_lines(in, path, true);
}

ParallelCorpus read_parallel_corpus(const std::string& source_path, const std::string& target_path) {
  auto source = read_text_lines(source_path);
  auto target = read_text_lines(target_path);
  if (source.size() != target.size())
    throw misaligned_corpus_error(source_path, source.size(), target_path, target.size());
  ParallelCorpus corpus;
  corpus.total_lines = static_cast<long>(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (is_blank(source[i]) || is_blank(target[i])) {
      ++corpus.empty_skipped;
      continue;
    }
    corpus.source.push_back(std::move(source[i]));
    corpus.target.push_back(std::move(target[i]));
    corpus.line_numbers.push_back(static_cast<long>(i) + 1);
  }
  return corpus;
}

}  // namespace nmt
