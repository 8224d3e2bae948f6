#include "nmt/decoding/translator.h"

#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>

#include "nmt/text/batching.h"
#include "nmt/text/corpus.h"
#include "nmt/base/error.h"
#include "nmt/decoding/strategy.h"
#include "nmt/decoding/vocabulary_part.h"

namespace nmt {
namespace {

// Splits length-sorted translations into batches by sentence count or padded tokens.
std::vector<std::vector<Translation*>> make_search_batches(std::vector<Translation*> sorted,
                                                           const TranslateOptions& options, int64_t max_sentences) {
  std::vector<std::vector<Translation*>> batches;
  std::vector<Translation*> current;
  size_t longest = 0;
  for (auto* item : sorted) {
    const size_t length = std::max(longest, item->source_ids.size() + 1);
    const bool full = static_cast<int64_t>(current.size()) >= max_sentences ||
                      (options.batch_size > 0 ? static_cast<int64_t>(current.size()) >= options.batch_size
                                              : static_cast<int64_t>((current.size() + 1) * length) > options.batch_tokens);
    if (!current.empty() && full) {
      batches.push_back(std::move(current));
      current.clear();
      longest = 0;
    }
    current.push_back(item);
    longest = std::max(longest, item->source_ids.size() + 1);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

// Beam search holds a few [rows, vocabulary] float matrices per step (log-probs, the
// candidates, their top-k), rows = sentences x beam. A beam or batch whose matrices
// cannot fit in half of the machine's memory is refused up front, or the batch is made
// smaller, instead of being left to the kernel's out-of-memory killer.
int64_t sentences_that_fit(int64_t beam, int64_t vocabulary) {
  constexpr double kBytesPerScore = 4.0 * 4;  // float, about four live copies
  const double per_sentence = static_cast<double>(beam) * static_cast<double>(vocabulary) * kBytesPerScore;
  const double budget = static_cast<double>(physical_memory_bytes()) / 2;
  if (budget <= 0) return std::numeric_limits<int64_t>::max();
  if (per_sentence > budget)
    throw Error("beam " + std::to_string(beam) + " needs about " + gigabytes(per_sentence) +
                " per sentence for its scores (target vocabulary " + std::to_string(vocabulary) +
                "), more than half of this machine's " + gigabytes(2 * budget) + "; use a smaller --beam");
  return std::max<int64_t>(1, static_cast<int64_t>(budget / per_sentence));
}

// Whether `phrase` occurs in `tokens` as a contiguous run.
bool contains_run(const std::vector<int>& tokens, const std::vector<int>& phrase) {
  return std::search(tokens.begin(), tokens.end(), phrase.begin(), phrase.end()) != tokens.end();
}

void warn_unmet_constraints(Translation& t) {
  if (t.constraint_ids.empty() || t.hypotheses.empty()) return;
  for (const auto& phrase : t.constraint_ids)
    if (!contains_run(t.hypotheses.front().tokens, phrase)) {
      t.warning = "not every constraint fits within the length limit (--max-len-ratio, --max-len-extra): "
                  "the output lacks some";
      return;
    }
}

}  // namespace

int64_t input_token_limit(const Seq2SeqModel& model, const SearchOptions& search, int64_t requested) {
  const int64_t positions = model.max_positions();
  if (positions == 0) return requested;
  int64_t limit = requested > 0 ? requested : positions;
  // eos on the source; bos + max target length + eos on the target side.
  while (limit > 1 && (limit + 1 > positions || max_target_length(limit, search) + 2 > positions)) --limit;
  return limit;
}

std::string guide_problem(const Seq2SeqModel& model, size_t prefix_tokens, size_t constraints) {
  const int64_t positions = model.max_positions();
  if (positions > 0 && static_cast<int64_t>(prefix_tokens) + 2 > positions)
    return "prefix of " + std::to_string(prefix_tokens) + " tokens: the model's " + std::to_string(positions) +
           " positions take at most " + std::to_string(positions - 2);
  if (constraints > SearchGuides::kMaxConstraints)
    return std::to_string(constraints) + " constraints: at most " + std::to_string(SearchGuides::kMaxConstraints) +
           " per line";
  return "";
}

std::shared_ptr<const Shortlist> read_shortlist(const std::string& path, const LoadedModel& model) {
  return std::make_shared<const Shortlist>(Shortlist::read(path, model.source_tokenizer, model.target_tokenizer));
}

void TranslateOptions::validate() const {
  search.validate();  // an unknown strategy included
  if (batch_size < 0) throw Error("batch size must be >= 0");
  if (batch_size == 0 && batch_tokens < 1) throw Error("batch tokens must be >= 1");
  if (max_input_tokens < 1) throw Error("max input tokens must be >= 1");
}

const std::string& Translation::best_text() const {
  static const std::string empty;
  return texts.empty() ? empty : texts.front();
}

Translator::Translator(InferenceModelPtr model, TranslateOptions options)
    : model_(std::move(model)), options_(std::move(options)) {
  options_.validate();
  input_limit_ = nmt::input_token_limit(network(), options_.search, options_.max_input_tokens);
  max_batch_sentences_ = sentences_that_fit(options_.search.beam, model_->config().model.target_vocab);
  if (const auto& shortlist = options_.shortlist) {
    const auto& vocab = model_->config().model;
    if (shortlist->source_vocab() != vocab.source_vocab || shortlist->target_vocab() != vocab.target_vocab)
      throw Error("the shortlist is for vocabularies of " + std::to_string(shortlist->source_vocab()) + " and " +
                  std::to_string(shortlist->target_vocab()) + " pieces, the model's have " +
                  std::to_string(vocab.source_vocab) + " and " + std::to_string(vocab.target_vocab));
  }
}

bool Translator::encode_guide(const std::string& prefix, const std::vector<std::string>& constraints,
                              Translation& t) const {
  if (const auto problem = utf8_problem(prefix); !problem.empty()) {
    t.skipped = true;
    t.warning = "prefix: " + problem + "; line not translated";
    return false;
  }
  for (const auto& phrase : constraints) {
    if (const auto problem = utf8_problem(phrase); !problem.empty()) {
      t.skipped = true;
      t.warning = "constraint: " + problem + "; line not translated";
      return false;
    }
    if (is_blank(phrase)) continue;
    auto ids = model().target_tokenizer.encode(phrase);
    if (!ids.empty()) t.constraint_ids.push_back(std::move(ids));
  }
  if (!is_blank(prefix)) t.prefix_ids = model().target_tokenizer.encode(prefix);
  return true;
}

Translation Translator::prepare(const std::string& line, const std::string& prefix,
                                const std::vector<std::string>& constraints) const {
  Translation t;
  if (!encode_guide(prefix, constraints, t)) return t;
  if (auto problem = nmt::guide_problem(network(), t.prefix_ids.size(), t.constraint_ids.size()); !problem.empty()) {
    t.skipped = true;
    t.warning = problem + "; line not translated";
    t.guide_problem = std::move(problem);
    t.prefix_ids.clear();
    t.constraint_ids.clear();
    return t;
  }
  if (const auto problem = utf8_problem(line); !problem.empty()) {
    t.skipped = true;
    t.warning = problem + "; line not translated";
    return t;
  }
  if (is_blank(line)) return t;
  t.source_ids = model().source_tokenizer.encode(line);
  if (t.source_ids.empty()) {
    // Zero-width spaces, a byte-order mark, control characters: text, but nothing the
    // tokenizer keeps. The output line stays empty, and the user is told why.
    t.skipped = true;
    t.warning = "the line has no tokens after normalisation (only invisible or control characters?); "
                "output is empty";
    return t;
  }
  if (static_cast<int64_t>(t.source_ids.size()) > input_limit_) {
    t.warning = "input of " + std::to_string(t.source_ids.size()) + " tokens truncated to " +
                std::to_string(input_limit_);
    t.truncated = true;
    t.source_ids.resize(static_cast<size_t>(input_limit_));
  }
  return t;
}

void Translator::search_batch(std::vector<Translation*>& batch, const std::vector<int64_t>& line_numbers,
                              const SearchOptions& search) const {
  std::vector<const std::vector<int>*> rows;
  for (auto* item : batch) rows.push_back(&item->source_ids);
  const auto source = pad_sequences(rows, -1, SpecialIds::kEos).to(model_->device());
  SearchGuides guides;
  guides.line_numbers = line_numbers;
  for (const auto* item : batch)
    if (!item->prefix_ids.empty()) {
      for (const auto* each : batch) guides.prefixes.push_back(each->prefix_ids);
      break;
    }
  for (const auto* item : batch)
    if (!item->constraint_ids.empty()) {
      for (const auto* each : batch) guides.constraints.push_back(each->constraint_ids);
      break;
    }
  auto results = options_.shortlist ? search_vocabulary_part(network(), shortlist_part(batch), source, search, guides)
                                    : nmt::search(network(), source, search, guides);
  for (size_t row = 0; row < batch.size(); ++row) {
    batch[row]->hypotheses = std::move(results[row]);
    for (const auto& hypothesis : batch[row]->hypotheses)
      batch[row]->texts.push_back(model().target_tokenizer.decode(hypothesis.tokens));
    warn_unmet_constraints(*batch[row]);
  }
}

VocabularyPart Translator::shortlist_part(const std::vector<Translation*>& batch) const {
  std::vector<std::vector<int64_t>> sentence_ids;
  for (const auto* item : batch) {
    auto& ids = sentence_ids.emplace_back(options_.shortlist->candidates({&item->source_ids}));
    // What a line's guides ask for is a candidate whatever the shortlist says.
    ids.insert(ids.end(), item->prefix_ids.begin(), item->prefix_ids.end());
    for (const auto& phrase : item->constraint_ids) ids.insert(ids.end(), phrase.begin(), phrase.end());
  }
  return VocabularyPart::per_sentence(sentence_ids, model_->config().model.target_vocab, model_->device());
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& lines) const {
  return translate(lines, std::vector<std::string>(lines.size()));
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& lines,
                                               const std::vector<std::string>& prefixes) const {
  return translate(lines, prefixes, {});
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& lines,
                                               const std::vector<std::string>& prefixes,
                                               const std::vector<std::vector<std::string>>& constraints,
                                               int64_t first_line) const {
  // The options' own search: validated and sized at construction.
  return translate_batches(lines, prefixes, constraints, options_.search, max_batch_sentences_, first_line);
}

namespace {

void require_search_taking_constraints(const SearchOptions& search) {
  if (!strategy_for(search).takes_constraints)
    throw Error("constraints need beam search (--beam 2 or more, or --search beam), not " + strategy_for(search).name);
}

}  // namespace

void Translator::check_search(const SearchOptions& search) const {
  search.validate();  // an unknown strategy included
  // The input limit was decided at construction from the options' length limits.
  if (search.max_length_ratio != options_.search.max_length_ratio ||
      search.max_length_extra != options_.search.max_length_extra)
    throw Error("a search given per call must keep the Translator's length limits");
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& lines,
                                               const std::vector<std::string>& prefixes,
                                               const std::vector<std::vector<std::string>>& constraints,
                                               const SearchOptions& search) const {
  check_search(search);
  return translate_batches(lines, prefixes, constraints, search,
                           sentences_that_fit(search.beam, model_->config().model.target_vocab), 0);
}

std::vector<Translation> Translator::translate_prepared(std::vector<Translation> prepared,
                                                        const SearchOptions& search) const {
  check_search(search);
  bool guided = false;
  for (const auto& t : prepared) guided = guided || !t.constraint_ids.empty();
  if (guided) require_search_taking_constraints(search);
  return search_prepared(std::move(prepared), search, sentences_that_fit(search.beam, model_->config().model.target_vocab), 0);
}

std::vector<Translation> Translator::translate_batches(const std::vector<std::string>& lines,
                                                       const std::vector<std::string>& prefixes,
                                                       const std::vector<std::vector<std::string>>& constraints,
                                                       const SearchOptions& search, int64_t max_sentences,
                                                       int64_t first_line) const {
  if (prefixes.size() != lines.size())
    throw Error(std::to_string(prefixes.size()) + " prefixes for " + std::to_string(lines.size()) + " lines");
  if (!constraints.empty() && constraints.size() != lines.size())
    throw Error("constraints for " + std::to_string(constraints.size()) + " lines, but " + std::to_string(lines.size()) +
                " lines");
  if (!constraints.empty()) require_search_taking_constraints(search);
  std::vector<Translation> translations;
  translations.reserve(lines.size());
  static const std::vector<std::string> none;
  for (size_t i = 0; i < lines.size(); ++i)
    translations.push_back(prepare(lines[i], prefixes[i], constraints.empty() ? none : constraints[i]));
  return search_prepared(std::move(translations), search, max_sentences, first_line);
}

std::vector<Translation> Translator::search_prepared(std::vector<Translation> translations, const SearchOptions& search,
                                                     int64_t max_sentences, int64_t first_line) const {
  torch::NoGradGuard no_grad;
  std::vector<Translation*> pending;
  for (auto& t : translations)
    if (!t.source_ids.empty()) pending.push_back(&t);
  // Longest first: the slowest batches start while memory is fresh, and similar lengths
  // share a batch so little time goes to padding. stable_sort keeps results independent
  // of anything but the lengths.
  std::stable_sort(pending.begin(), pending.end(), [](const Translation* a, const Translation* b) {
    return a->source_ids.size() > b->source_ids.size();
  });
  for (auto& batch : make_search_batches(pending, options_, max_sentences)) {
    std::vector<int64_t> line_numbers;
    for (const auto* item : batch) line_numbers.push_back(first_line + (item - translations.data()));
    search_batch(batch, line_numbers, search);
    if (on_lines_done_) on_lines_done_(static_cast<int64_t>(batch.size()));
  }
  return translations;
}

}  // namespace nmt
