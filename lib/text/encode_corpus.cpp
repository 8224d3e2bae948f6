// Encoding a read parallel corpus with the tokenizers (apart from corpus.cpp, which
// only reads and checks text and so needs no tokenizer).
#include <sstream>

#include "nmt/text/corpus.h"
#include "nmt/text/parallel_lines.h"
#include "nmt/text/tokenizer.h"

namespace nmt {

EncodedCorpus encode_parallel_corpus(const ParallelCorpus& corpus, const Tokenizer& source_tokenizer,
                                     const Tokenizer& target_tokenizer, size_t max_tokens) {
  EncodedCorpus encoded;
  encoded.empty_skipped = corpus.empty_skipped;
  for (size_t i = 0; i < corpus.source.size(); ++i) {
    auto source = source_tokenizer.encode(corpus.source[i]);
    auto target = target_tokenizer.encode(corpus.target[i]);
    if (max_tokens > 0 && (source.size() > max_tokens || target.size() > max_tokens)) {
      ++encoded.too_long_skipped;
      continue;
    }
    encoded.source.push_back(std::move(source));
    encoded.target.push_back(std::move(target));
    encoded.line_numbers.push_back(corpus.line_numbers[i]);
    encoded.kept.push_back(i);
  }
  return encoded;
}

std::string describe(const ParallelCorpus& corpus, const EncodedCorpus& encoded,
                     const std::string& source_path, const std::string& target_path,
                     size_t max_tokens) {
  std::ostringstream out;
  out << "read " << corpus.total_lines << " lines from " << parallel_files_name(source_path, target_path)
      << ": kept " << encoded.source.size() << ", skipped " << corpus.empty_skipped << " empty";
  if (max_tokens > 0) out << ", " << encoded.too_long_skipped << " over " << max_tokens << " tokens";
  return out.str();
}

}  // namespace nmt
