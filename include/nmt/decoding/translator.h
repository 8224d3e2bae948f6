#pragma once
// Translating raw text lines with a loaded checkpoint: the part of nmt-translate (and
// nmt-align) that is not command-line handling. Lines are checked (UTF-8, length),
// encoded, sorted by length into batches, searched, and returned in input order.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nmt/models/checkpoint.h"
#include "nmt/models/inference_model.h"
#include "nmt/decoding/search.h"
#include "nmt/decoding/vocabulary_part.h"
#include "nmt/text/shortlist.h"

namespace nmt {

struct TranslateOptions {
  SearchOptions search;          ///< beam 1 runs greedy search
  int64_t batch_size = 0;        ///< sentences per batch; 0 = group by batch_tokens
  int64_t batch_tokens = 4096;   ///< padded source tokens per batch (when batch_size is 0)
  int64_t max_input_tokens = 250;  ///< longer inputs are truncated and flagged
  /// Each line chooses among its own shortlist candidates only (text/shortlist.h: those of
  /// its source pieces and the always-allowed ones), and its prefix and constraint tokens;
  /// so batching never changes a result. Null: the whole target vocabulary.
  std::shared_ptr<const Shortlist> shortlist;

  /// Throws nmt::Error naming the first bad field.
  void validate() const;
};

struct Translation {
  std::string warning;             ///< why the line was skipped or cut (empty if fine)
  bool skipped = false;            ///< not translated (invalid UTF-8): output is empty
  bool truncated = false;          ///< the input was cut to max_input_tokens
  std::vector<int> source_ids;     ///< what the model saw, without eos
  std::vector<int> prefix_ids;     ///< target tokens every hypothesis starts with (translate with prefixes)
  std::vector<std::vector<int>> constraint_ids;  ///< phrases every hypothesis contains (translate with constraints)
  std::string guide_problem;       ///< why the model cannot take the line's prefix or constraints ("" if it can)
  std::vector<Hypothesis> hypotheses;  ///< best first; empty for empty/skipped lines
  std::vector<std::string> texts;      ///< detokenized hypotheses, same order

  /// The best translation, or "" when there is none.
  const std::string& best_text() const;
};

/// The longest source (tokens, eos excluded) `model` can translate with `search`: the
/// Transformer's positional table bounds the source and the longest target it may
/// produce. `requested` > 0 caps it further; models without a limit return `requested`
/// (0 = no limit).
int64_t input_token_limit(const Seq2SeqModel& model, const SearchOptions& search, int64_t requested);

/// Why `model` cannot translate a line whose every hypothesis must start with
/// `prefix_tokens` target tokens and contain `constraints` phrases ("" when it can): the
/// Transformer's positional table bounds the prefix (bos and eos around it), and the search
/// tracks at most SearchGuides::kMaxConstraints phrases. Checked per line before batching,
/// so that such a line is skipped with this warning instead of failing its batch.
std::string guide_problem(const Seq2SeqModel& model, size_t prefix_tokens, size_t constraints);

/// The shortlist at `path` for `model`'s vocabularies (Shortlist::read), for
/// TranslateOptions::shortlist.
std::shared_ptr<const Shortlist> read_shortlist(const std::string& path, const LoadedModel& model);

class Translator {
 public:
  /// Reads `model` as it was set up (its precision, path and device); changes nothing in
  /// it, so any number of Translators may share one. Throws nmt::Error for invalid options,
  /// or a beam whose scores alone would not fit in half of the machine's memory (smaller
  /// batches are used when only a batch would not).
  Translator(InferenceModelPtr model, TranslateOptions options);

  /// One Translation per line, in input order. Never throws for bad lines; they get a
  /// warning and an empty result instead. Every translate() is const: any number of
  /// threads may call one Translator at once (each call's work is its own; the model is
  /// only read).
  std::vector<Translation> translate(const std::vector<std::string>& lines) const;
  /// The same, every hypothesis of line i starting with prefixes[i] (target text, split by
  /// the model's target tokenizer; "" = none): see SearchGuides::prefixes. A prefix that
  /// is not valid UTF-8 skips its line with a warning. Throws nmt::Error when the counts differ.
  std::vector<Translation> translate(const std::vector<std::string>& lines, const std::vector<std::string>& prefixes) const;
  /// The same, every hypothesis of line i also containing each phrase of constraints[i]
  /// (target text, split by the target tokenizer; SearchGuides::constraints; beam search
  /// only). A line whose best hypothesis lacks one (the length limit left no room) gets a
  /// warning; one with a guide_problem() is skipped with it. `constraints` empty: none.
  /// `first_line`: the number of lines[0] in the caller's whole input (lines read before
  /// this call). Sampling's random streams follow line numbers, so that a line's samples do
  /// not depend on how the input was cut into calls.
  std::vector<Translation> translate(const std::vector<std::string>& lines, const std::vector<std::string>& prefixes,
                                     const std::vector<std::vector<std::string>>& constraints,
                                     int64_t first_line = 0) const;
  /// The same with `search` in place of the options' (nmt-serve: each batch has its own
  /// beam, n-best, alpha, attention). Throws nmt::Error for invalid search options, and
  /// for length limits other than the options' (the input limit was decided by them).
  std::vector<Translation> translate(const std::vector<std::string>& lines, const std::vector<std::string>& prefixes,
                                     const std::vector<std::vector<std::string>>& constraints,
                                     const SearchOptions& search) const;

  /// A line as translate() prepares it, checked and encoded once (source, prefix,
  /// constraints; a bad line skipped with its warning, a long one truncated), for
  /// translate_prepared(): nmt-serve prepares each line when it admits it.
  Translation prepare(const std::string& line, const std::string& prefix,
                      const std::vector<std::string>& constraints) const;
  /// translate() of lines prepare() made, with `search` as that overload takes it.
  std::vector<Translation> translate_prepared(std::vector<Translation> prepared, const SearchOptions& search) const;

  /// Called after each batch of a translate() call with the number of lines it finished
  /// (tools print progress from it), on the thread that called translate(); none by
  /// default. Set before translating, not while another thread translates.
  void on_lines_done(std::function<void(int64_t lines)> observer) { on_lines_done_ = std::move(observer); }

  const LoadedModel& model() const { return model_->loaded(); }
  Seq2SeqModel& network() const { return model_->network(); }
  const InferenceModel& inference_model() const { return *model_; }
  const TranslateOptions& options() const { return options_; }
  /// Longest input (in tokens) translated without truncation.
  int64_t input_token_limit() const { return input_limit_; }
  /// The bytes of a line worth reading (nmt/text/line_reader.h): 64 per token of
  /// input_token_limit(), since a SentencePiece piece is at most 16 characters of at most 4
  /// bytes. Beyond it a line only adds tokens that truncation drops (unless it is mostly
  /// spaces or characters the vocabulary lacks), so tools cut lines there, with a warning,
  /// to keep memory and time bounded whatever a line's length.
  size_t input_byte_limit() const { return static_cast<size_t>(input_limit_) * 64; }

 private:
  /// translate() with `search` in batches of at most `max_sentences` sentences.
  std::vector<Translation> translate_batches(const std::vector<std::string>& lines,
                                             const std::vector<std::string>& prefixes,
                                             const std::vector<std::vector<std::string>>& constraints,
                                             const SearchOptions& search, int64_t max_sentences,
                                             int64_t first_line) const;
  /// The prepared lines searched in batches of at most `max_sentences`, longest first;
  /// translations[i] is line first_line + i.
  std::vector<Translation> search_prepared(std::vector<Translation> translations, const SearchOptions& search,
                                           int64_t max_sentences, int64_t first_line) const;
  /// Throws nmt::Error for a per-call search the Translator cannot run (invalid, or length
  /// limits other than its options', by which the input limit was decided).
  void check_search(const SearchOptions& search) const;
  /// `line_numbers`: each item's line in the caller's input (sampling's random streams
  /// follow them, so a line's samples do not depend on the batching).
  void search_batch(std::vector<Translation*>& batch, const std::vector<int64_t>& line_numbers,
                    const SearchOptions& search) const;
  /// The part of the target vocabulary `batch` decodes over: each line's own shortlist
  /// candidates, its prefix and constraint tokens (VocabularyPart::per_sentence).
  VocabularyPart shortlist_part(const std::vector<Translation*>& batch) const;
  /// The guide's token ids into `t` (blank ones dropped); false, with t's warning, when a
  /// prefix or phrase is not valid UTF-8.
  bool encode_guide(const std::string& prefix, const std::vector<std::string>& constraints, Translation& t) const;

  InferenceModelPtr model_;
  TranslateOptions options_;
  int64_t input_limit_ = 0;
  int64_t max_batch_sentences_ = 0;  // what the machine's memory holds at this beam size
  std::function<void(int64_t)> on_lines_done_;
};

}  // namespace nmt
