#include "nmt/text/parallel_lines.h"

#include <cerrno>
#include <cstring>

namespace nmt {
namespace {

std::ifstream open_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error("cannot open " + path + ": " + std::strerror(errno));
  return file;
}

}  // namespace

Error misaligned_corpus_error(const std::string& source_path, uint64_t source_lines, const std::string& target_path,
                              uint64_t target_lines) {
  return Error("parallel corpus is not line-aligned: " + source_path + " has " + std::to_string(source_lines) +
               " lines but " + target_path + " has " + std::to_string(target_lines));
}

ParallelLines::ParallelLines(std::string source_path, std::string target_path)
    : source_path_(std::move(source_path)),
      target_path_(std::move(target_path)),
      source_(open_text(source_path_)),
      target_(open_text(target_path_)),
      source_lines_(source_, source_path_, LineReader::kDefaultMaxBytes, LineReader::Overlong::cut),
      target_lines_(target_, target_path_, LineReader::kDefaultMaxBytes, LineReader::Overlong::cut) {}

bool ParallelLines::next(std::string& source, std::string& target) {
  const bool has_source = source_lines_.next(source), has_target = target_lines_.next(target);
  if (has_source == has_target) {
    lines_ += has_source;
    return has_source;
  }
  auto& longer = has_source ? source_lines_ : target_lines_;
  uint64_t rest = 1;
  for (std::string line; longer.next(line);) ++rest;
  throw misaligned_corpus_error(source_path_, lines_ + (has_source ? rest : 0), target_path_,
                                lines_ + (has_source ? 0 : rest));
}

double ParallelLines::fraction(uint64_t source_bytes) {
  const auto position = source_.tellg();
  return source_bytes > 0 && position >= 0 ? double(position) / double(source_bytes) : 1.0;
}

}  // namespace nmt
