#include "nmt/text/lexical_translation.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "nmt/base/error.h"
#include "nmt/text/corpus.h"
#include "nmt/text/line_reader.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

// The corpus's sentence pairs, tokenized, one after the other: one pass.
class TokenizedPairs {
 public:
  explicit TokenizedPairs(const LexicalTranslationOptions& options)
      : options_(options),
        source_file_(open(options.source_path)),
        target_file_(open(options.target_path)),
        source_(source_file_, options.source_path, LineReader::kDefaultMaxBytes, LineReader::Overlong::cut),
        target_(target_file_, options.target_path, LineReader::kDefaultMaxBytes, LineReader::Overlong::cut) {}

  // The next pair with both sides non-empty; false at the end (or after max_pairs lines).
  bool next(std::vector<int>& source, std::vector<int>& target) {
    std::string source_line, target_line;
    while (options_.max_pairs == 0 || lines_ < options_.max_pairs) {
      const bool more_source = source_.next(source_line), more_target = target_.next(target_line);
      if (more_source != more_target)
        throw Error((more_source ? options_.target_path : options_.source_path) + " has fewer lines (" +
                    std::to_string(lines_) + ") than " + (more_source ? options_.source_path : options_.target_path));
      if (!more_source) return false;
      ++lines_;
      source = options_.source_tokenizer->encode(source_line);
      target = options_.target_tokenizer->encode(target_line);
      if (!source.empty() && !target.empty()) return true;
    }
    return false;
  }

 private:
  static std::ifstream open(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw Error("cannot open " + path);
    return file;
  }

  const LexicalTranslationOptions& options_;
  std::ifstream source_file_, target_file_;
  LineReader source_, target_;
  long lines_ = 0;
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

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void log_pass(const LexicalTranslationOptions& options, const std::string& what, int64_t pairs, double seconds) {
  if (!options.log) return;
  char line[160];
  std::snprintf(line, sizeof line, "%s: %lld sentence pairs in %.1f s", what.c_str(), static_cast<long long>(pairs),
                seconds);
  options.log(line);
}

// The first pass: which pairs met, and the target counts.
void find_pairs(const LexicalTranslationOptions& options, LexicalTranslation& table) {
  const auto start = std::chrono::steady_clock::now();
  CooccurrenceRows rows(static_cast<size_t>(table.source_vocab) + 1);
  TokenizedPairs reader(options);
  std::vector<int> source, target;
  while (reader.next(source, target)) {
    const auto targets = unique_ids(target);
    for (const int32_t s : unique_ids(source)) rows.add(static_cast<size_t>(s), targets);
    rows.add(static_cast<size_t>(table.source_vocab), targets);  // NULL meets every target
    for (const int t : target) ++table.target_counts[static_cast<size_t>(t)];
    ++table.pairs;
  }
  rows.finish(table.offsets, table.targets);
  log_pass(options, "found " + std::to_string(table.targets.size()) + " pairs of pieces", table.pairs,
           seconds_since(start));
}

// One EM pass: the expected counts of each pair under the current probabilities, then the
// probabilities that make them most likely.
void expectation_maximisation(const LexicalTranslationOptions& options, LexicalTranslation& table,
                              std::vector<float>& probabilities, int pass) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> counts(probabilities.size(), 0.0);
  TokenizedPairs reader(options);
  std::vector<int> source, target;
  std::vector<int64_t> entry;  // per source position (NULL last): the entry of the current target
  while (reader.next(source, target)) {
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
  log_pass(options, "IBM Model 1, pass " + std::to_string(pass) + " of " + std::to_string(options.iterations),
           table.pairs, seconds_since(start));
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
  find_pairs(options, table);
  if (table.pairs == 0)
    throw Error(options.source_path + " / " + options.target_path + ": no sentence pair with text on both sides");
  // Every pair equally likely: the first pass's expected counts are the pairs' fractional co-occurrences.
  std::vector<float> probabilities(table.targets.size(), 1.0f);
  for (int pass = 1; pass <= options.iterations; ++pass) expectation_maximisation(options, table, probabilities, pass);
  table.probabilities = std::move(probabilities);
  // The NULL row served the estimate; the table answers for real source ids.
  table.offsets.pop_back();
  table.targets.resize(static_cast<size_t>(table.offsets.back()));
  table.probabilities.resize(table.targets.size());
  return table;
}

}  // namespace nmt
