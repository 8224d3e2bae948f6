#include "nmt/text/lexical_translation.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "nmt/base/error.h"
#include "nmt/text/parallel_lines.h"
#include "nmt/text/prepared_corpus.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

// The corpus's sentence pairs with text on both sides, one after the other: one pass.
class PairStream {
 public:
  virtual ~PairStream() = default;
  /// The next pair; false at the end (or after max_pairs).
  virtual bool next(std::vector<int>& source, std::vector<int>& target) = 0;
};

// Text, tokenized as it is read.
class TextPairs final : public PairStream {
 public:
  explicit TextPairs(const LexicalTranslationOptions& options)
      : options_(options), lines_(options.source_path, options.target_path) {}

  bool next(std::vector<int>& source, std::vector<int>& target) override {
    std::string source_line, target_line;
    while ((options_.max_pairs == 0 || lines_.lines() < static_cast<uint64_t>(options_.max_pairs)) &&
           lines_.next(source_line, target_line)) {
      source = options_.source_tokenizer->encode(source_line);
      target = options_.target_tokenizer->encode(target_line);
      if (!source.empty() && !target.empty()) return true;
    }
    return false;
  }

 private:
  const LexicalTranslationOptions& options_;
  ParallelLines lines_;
};

// A prepared corpus, read in place (it stores no pair with a blank side).
class PreparedPairs final : public PairStream {
 public:
  PreparedPairs(const PreparedCorpus& corpus, long max_pairs)
      : corpus_(corpus), end_(max_pairs > 0 ? std::min(corpus.size(), static_cast<size_t>(max_pairs)) : corpus.size()) {}

  bool next(std::vector<int>& source, std::vector<int>& target) override {
    if (next_ >= end_) return false;
    corpus_.read(next_++, source, target);
    return true;
  }

 private:
  const PreparedCorpus& corpus_;
  size_t end_, next_ = 0;
};

// Where the passes read from: the prepared corpus opened (and checked) once, or the text.
class CorpusPasses {
 public:
  explicit CorpusPasses(const LexicalTranslationOptions& options) : options_(options) {
    if (options.prepared_path.empty()) return;
    prepared_ = PreparedCorpus::open(options.prepared_path);
    const auto reason = tokenizer_mismatch_reason(prepared_->info(), *options.source_tokenizer, *options.target_tokenizer);
    if (!reason.empty()) throw Error(options.prepared_path + ": " + reason);
  }
  std::unique_ptr<PairStream> pass() const {
    if (prepared_) return std::make_unique<PreparedPairs>(*prepared_, options_.max_pairs);
    return std::make_unique<TextPairs>(options_);
  }
  std::string name() const {
    return prepared_ ? options_.prepared_path : parallel_files_name(options_.source_path, options_.target_path);
  }

 private:
  const LexicalTranslationOptions& options_;
  std::shared_ptr<const PreparedCorpus> prepared_;
};

// Within a pass, a line at most every progress_every_seconds: pairs read and their rate.
class PassProgress {
 public:
  PassProgress(const LexicalTranslationOptions& options, std::string what)
      : options_(options), what_(std::move(what)), start_(std::chrono::steady_clock::now()), last_(start_) {}
  void pair_read() {
    if (++pairs_ % 4096 != 0 || !options_.log) return;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_).count() < options_.progress_every_seconds) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    char line[200];
    std::snprintf(line, sizeof line, "%s: %lld sentence pairs read, %.0f pairs/s", what_.c_str(),
                  static_cast<long long>(pairs_), static_cast<double>(pairs_) / std::max(seconds, 1e-9));
    options_.log(line);
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  const LexicalTranslationOptions& options_;
  std::string what_;
  std::chrono::steady_clock::time_point start_, last_;
  int64_t pairs_ = 0;
};

// Per source row (the NULL source last), the targets it met: appended per sentence pair,
// sorted and deduplicated whenever a row has doubled since, so a row holds at most about
// twice its distinct targets.
class CooccurrenceRows {
 public:
  explicit CooccurrenceRows(size_t rows) : rows_(rows), compacted_(rows, 0) {}

  void add(size_t row, const std::vector<int32_t>& targets) {
    auto& list = rows_[row];
    list.insert(list.end(), targets.begin(), targets.end());
    if (list.size() > std::max<size_t>(64, 2 * compacted_[row])) compact(row);
  }

  // Every row sorted and unique, as offsets and targets.
  void finish(std::vector<int64_t>& offsets, std::vector<int32_t>& targets) {
    offsets.assign(1, 0);
    for (size_t row = 0; row < rows_.size(); ++row) {
      compact(row);
      targets.insert(targets.end(), rows_[row].begin(), rows_[row].end());
      offsets.push_back(static_cast<int64_t>(targets.size()));
      std::vector<int32_t>().swap(rows_[row]);
    }
  }

 private:
  void compact(size_t row) {
    auto& list = rows_[row];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    compacted_[row] = list.size();
  }

  std::vector<std::vector<int32_t>> rows_;
  std::vector<size_t> compacted_;
};

std::vector<int32_t> unique_ids(const std::vector<int>& ids) {
  std::vector<int32_t> unique(ids.begin(), ids.end());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  return unique;
}

void log_pass(const LexicalTranslationOptions& options, const std::string& what, int64_t pairs, double seconds) {
  if (!options.log) return;
  char line[160];
  std::snprintf(line, sizeof line, "%s: %lld sentence pairs in %.1f s", what.c_str(), static_cast<long long>(pairs),
                seconds);
  options.log(line);
}

// The first pass: which pairs met, and the target counts.
void find_pairs(const LexicalTranslationOptions& options, const CorpusPasses& corpus, LexicalTranslation& table) {
  PassProgress progress(options, "finding the pairs of pieces");
  CooccurrenceRows rows(static_cast<size_t>(table.source_vocab) + 1);
  const auto pairs = corpus.pass();
  std::vector<int> source, target;
  while (pairs->next(source, target)) {
    progress.pair_read();
    const auto targets = unique_ids(target);
    for (const int32_t s : unique_ids(source)) rows.add(static_cast<size_t>(s), targets);
    rows.add(static_cast<size_t>(table.source_vocab), targets);  // NULL meets every target
    for (const int t : target) ++table.target_counts[static_cast<size_t>(t)];
    ++table.pairs;
  }
  rows.finish(table.offsets, table.targets);
  log_pass(options, "found " + std::to_string(table.targets.size()) + " pairs of pieces", table.pairs,
           progress.seconds());
}

// One EM pass: the expected counts of each pair under the current probabilities, then the
// probabilities that make them most likely.
void expectation_maximisation(const LexicalTranslationOptions& options, const CorpusPasses& corpus,
                              LexicalTranslation& table, std::vector<float>& probabilities, int pass) {
  const std::string what = "IBM Model 1, pass " + std::to_string(pass) + " of " + std::to_string(options.iterations);
  PassProgress progress(options, what);
  std::vector<double> counts(probabilities.size(), 0.0);
  const auto pairs = corpus.pass();
  std::vector<int> source, target;
  std::vector<int64_t> entry;  // per source position (NULL last): the entry of the current target
  while (pairs->next(source, target)) {
    progress.pair_read();
    source.push_back(table.source_vocab);  // NULL
    entry.resize(source.size());
    for (const int t : target) {
      double total = 0;
      for (size_t i = 0; i < source.size(); ++i) {
        const auto s = static_cast<size_t>(source[i]);
        const auto first = table.targets.begin() + table.offsets[s], last = table.targets.begin() + table.offsets[s + 1];
        entry[i] = std::lower_bound(first, last, t) - table.targets.begin();  // always found: the pair met
        total += probabilities[static_cast<size_t>(entry[i])];
      }
      if (total <= 0) continue;
      for (size_t i = 0; i < source.size(); ++i)
        counts[static_cast<size_t>(entry[i])] += probabilities[static_cast<size_t>(entry[i])] / total;
    }
  }
  for (size_t s = 0; s + 1 < table.offsets.size(); ++s) {
    double sum = 0;
    for (int64_t e = table.offsets[s]; e < table.offsets[s + 1]; ++e) sum += counts[static_cast<size_t>(e)];
    for (int64_t e = table.offsets[s]; e < table.offsets[s + 1]; ++e)
      probabilities[static_cast<size_t>(e)] = sum > 0 ? static_cast<float>(counts[static_cast<size_t>(e)] / sum) : 0.0f;
  }
  log_pass(options, what, table.pairs, progress.seconds());
}

}  // namespace

LexicalTranslation estimate_lexical_translation(const LexicalTranslationOptions& options) {
  if (options.source_tokenizer == nullptr || options.target_tokenizer == nullptr)
    throw Error("lexical translation: both tokenizers are needed");
  if (options.iterations < 1) throw Error("lexical translation: at least one iteration");
  LexicalTranslation table;
  table.source_vocab = options.source_tokenizer->vocab_size();
  table.target_vocab = options.target_tokenizer->vocab_size();
  table.target_counts.assign(static_cast<size_t>(table.target_vocab), 0);
  const CorpusPasses corpus(options);
  find_pairs(options, corpus, table);
  if (table.pairs == 0) throw Error(corpus.name() + ": no sentence pair with text on both sides");
  // Every pair equally likely: the first pass's expected counts are the pairs' fractional co-occurrences.
  std::vector<float> probabilities(table.targets.size(), 1.0f);
  for (int pass = 1; pass <= options.iterations; ++pass)
    expectation_maximisation(options, corpus, table, probabilities, pass);
  table.probabilities = std::move(probabilities);
  // The NULL row served the estimate; the table answers for real source ids.
  table.offsets.pop_back();
  table.targets.resize(static_cast<size_t>(table.offsets.back()));
  table.probabilities.resize(table.targets.size());
  return table;
}

}  // namespace nmt
