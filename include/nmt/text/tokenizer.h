#pragma once
// SentencePiece tokenizer with the fixed special ids every model relies on.
// The SentencePiece code itself lives in a plugin (see lib/spm_backend/spm_backend.h).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nmt {

/// Special ids fixed by nmt-spm-train; models and search rely on them.
struct SpecialIds {
  static constexpr int kPad = 0;
  static constexpr int kUnk = 1;
  static constexpr int kBos = 2;
  static constexpr int kEos = 3;
  /// Whether `id` is one of them (every decoder's vocabulary holds them whatever it is given).
  static constexpr bool contains(int id) { return id >= kPad && id <= kEos; }
};

class Tokenizer {
 public:
  /// Loads a .model file; throws nmt::Error naming the file on failure.
  static Tokenizer from_file(const std::string& path);
  /// Loads a serialized model (as stored in checkpoints). `origin` names it in errors.
  static Tokenizer from_serialized(std::string serialized, const std::string& origin);

  std::vector<int> encode(std::string_view text) const;
  std::vector<std::string> encode_pieces(std::string_view text) const;
  /// Decodes ids to text; pad/bos/eos are dropped, unk renders as " ⁇ ".
  std::string decode(const std::vector<int>& ids) const;
  std::string piece(int id) const;
  float score(int id) const;
  int vocab_size() const { return vocab_size_; }
  /// The serialized model proto: what a checkpoint stores.
  const std::string& serialized() const { return serialized_; }

 private:
  struct Handle;
  Tokenizer(std::shared_ptr<Handle> handle, std::string serialized);
  std::shared_ptr<Handle> handle_;  // shared: copies of a Tokenizer share one processor
  std::string serialized_;
  int vocab_size_ = 0;
};

struct TokenizerTrainOptions {
  std::vector<std::string> inputs;  // text files, one sentence per line
  std::string model_prefix;         // writes PREFIX.model and PREFIX.vocab
  int vocab_size = 8000;
  std::string model_type = "bpe";   // bpe | unigram
  double character_coverage = 1.0;
  int threads = 1;
  /// Train on at most this many sentences (non-blank lines of all inputs together): a
  /// uniform sample, drawn while reading, so memory stays bounded on any corpus. 0 = all.
  long max_sentences = kDefaultTokenizerSentences;
  uint64_t seed = 1;                ///< of the sample: the same inputs and seed, the same tokenizer
  static constexpr long kDefaultTokenizerSentences = 1000000;
};

struct TokenizerTrainReport {
  uint64_t sentences_read = 0;  ///< non-blank lines in the inputs
  uint64_t sentences_used = 0;  ///< of them, what SentencePiece trained on
};

/// Trains a tokenizer and writes PREFIX.model / PREFIX.vocab atomically: on any
/// failure nothing is left behind. Throws nmt::Error with a one-line reason.
TokenizerTrainReport train_tokenizer(const TokenizerTrainOptions& options);

}  // namespace nmt
