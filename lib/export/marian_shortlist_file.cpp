#include "marian_shortlist_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <unordered_map>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"

namespace nmt {
namespace {

// A text file's lines one at a time, gzipped or not (zlib reads a plain file as it is):
// text shortlists are often shipped gzipped (lex.s2t.gz), and large; one line is held.
class TextLines {
 public:
  explicit TextLines(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    if (file_ == nullptr) throw Error("cannot read " + path + ": " + std::strerror(errno));
  }
  ~TextLines() { gzclose(file_); }
  TextLines(const TextLines&) = delete;
  TextLines& operator=(const TextLines&) = delete;

  bool next(std::string& line) {
    line.clear();
    char buffer[4096];
    while (gzgets(file_, buffer, sizeof buffer) != nullptr) {
      line += buffer;
      if (line.back() == '\n') {
        line.pop_back();
        return true;
      }
    }
    int status = Z_OK;
    const char* message = gzerror(file_, &status);
    if (status != Z_OK && status != Z_STREAM_END) throw Error(path_ + ": " + message);
    return !line.empty();
  }

 private:
  std::string path_;
  gzFile file_;
};

// Marian's id of each piece of one side, its <unk> for a piece it lacks (as Marian's
// vocabularies answer; a piece of the SentencePiece model missing from vocab.yml is one).
MarianPieceIds marian_piece_ids(const MarianVocabularySide& side) {
  auto ids = std::make_shared<std::unordered_map<std::string, uint32_t>>();
  uint32_t unknown = 0;
  for (size_t marian = 0; marian < side.our_id_of_marian_id.size(); ++marian) {
    const int ours = side.our_id_of_marian_id[marian];
    ids->emplace(side.tokenizer.piece(ours), static_cast<uint32_t>(marian));
    if (ours == SpecialIds::kUnk) unknown = static_cast<uint32_t>(marian);
  }
  return [ids, unknown](const std::string& piece) {
    const auto found = ids->find(piece);
    return found == ids->end() ? unknown : found->second;
  };
}

bool starts_as_binary_shortlist(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::string head(sizeof(uint64_t), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return is_marian_binary_shortlist(head);
}

}  // namespace

MarianLexicalShortlist read_marian_shortlist_file(const std::string& path, const MarianVocabularySide& source,
                                                  const MarianVocabularySide& target, int64_t marian_source,
                                                  int64_t marian_target, const std::optional<MarianShortlistCut>& cut) {
  if (starts_as_binary_shortlist(path)) {
    if (cut)
      throw Error(path + " is a binary shortlist: its header says how it was cut (the first, best and threshold "
                         "options are for a text one)");
    return read_marian_shortlist(read_file(path, "Marian shortlist"), path, marian_source, marian_target);
  }
  TextLines lines(path);
  return marian_shortlist_from_text([&lines](std::string& line) { return lines.next(line); }, path, marian_source,
                                    marian_piece_ids(source), marian_piece_ids(target), cut.value_or(MarianShortlistCut{}));
}

}  // namespace nmt
