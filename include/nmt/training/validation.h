#pragma once
// Validation during training: teacher-forced loss and perplexity, and BLEU of greedy
// translations (detokenized, sacreBLEU-compatible), plus chrF and exact-match rate
// (BLEU is 0 for one-word sentences, such as the bundled German number words).
#include <string>
#include <vector>

#include "nmt/text/corpus.h"
#include "nmt/models/model.h"
#include "nmt/text/tokenizer.h"

namespace nmt {

struct ValidationSet {
  EncodedCorpus encoded;
  std::vector<std::string> references;  ///< raw target lines of the kept pairs
};

struct ValidationResult {
  double loss = 0;        ///< mean NLL per target token (no label smoothing)
  double perplexity = 0;
  double bleu = 0;
  double chrf = 0;
  double exact_match = 0;  ///< percent of translations identical to the reference
  long sentences = 0;
};

/// `max_sentences` > 0 translates only the first N sentences (loss uses all).
ValidationResult validate(Seq2SeqModel& model, const ValidationSet& data, const Tokenizer& target_tokenizer,
                          int64_t batch_tokens, int64_t max_sentences, const torch::Device& device);

}  // namespace nmt
