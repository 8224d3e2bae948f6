#pragma once
// Which target pieces each source piece translates to, learnt from a parallel corpus by
// IBM Model 1 (Brown et al. 1993): p(t | s) by expectation-maximisation over every pair of
// pieces that meet in a sentence pair, a NULL source included (so that target pieces with
// no counterpart, articles and punctuation, need not be explained by a real one). What
// fast_align and GIZA++ start from, and what Marian's lexical shortlists are read from;
// here the input of a vocabulary shortlist (shortlist.h).
//
// Memory: the table of pairs that met (bounded by the two vocabularies, in practice far
// below), not the corpus: the corpus is read again on every pass, text tokenized again,
// a prepared corpus (prepared_corpus.h) read in place.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nmt {

class Tokenizer;

struct LexicalTranslationOptions {
  std::string source_path, target_path;  ///< line-aligned text, tokenized on every pass
  /// Or a prepared corpus (nmt-prepare) made with these tokenizers, read in place (no
  /// tokenizing: the faster input for a large corpus). Used when not empty.
  std::string prepared_path;
  const Tokenizer* source_tokenizer = nullptr;
  const Tokenizer* target_tokenizer = nullptr;
  int iterations = 5;    ///< EM passes after the pass that finds the pairs
  long max_pairs = 0;    ///< read at most this many lines (text) or pairs (prepared) (0: all)
  /// Called with a line per pass (what it read, how long it took), and within a pass at
  /// most every progress_every_seconds (how far it is); none by default.
  std::function<void(const std::string&)> log;
  double progress_every_seconds = 10;
};

/// p(t | s) for every pair (s, t) that met in a sentence pair, per source id in increasing
/// target order, and how often each target id occurs.
struct LexicalTranslation {
  int source_vocab = 0, target_vocab = 0;
  std::vector<int64_t> offsets;      ///< [source_vocab + 1]: source s's entries are [offsets[s], offsets[s+1])
  std::vector<int32_t> targets;      ///< per entry: the target id
  std::vector<float> probabilities;  ///< per entry: p(target | source); each source's sum to 1
  std::vector<int64_t> target_counts;  ///< [target_vocab]: occurrences in the corpus's target side
  int64_t pairs = 0;                 ///< sentence pairs learnt from (both sides non-empty)
};

/// Reads the corpus iterations + 1 times. nmt::Error naming the file for one that cannot
/// be read, for sides of different lengths (within max_pairs), and for a prepared corpus
/// made with other tokenizers.
LexicalTranslation estimate_lexical_translation(const LexicalTranslationOptions& options);

}  // namespace nmt
