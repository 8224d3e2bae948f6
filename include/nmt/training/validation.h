#pragma once
// Validation during training: teacher-forced loss and perplexity, and every registered
// metric (eval/metric.h: BLEU, chrF, exact match) of greedy translations, detokenized.
// (BLEU is 0 for one-word sentences, such as the bundled German number words.)
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nmt/text/corpus.h"
#include "nmt/models/inference_model.h"
#include "nmt/models/model.h"
#include "nmt/text/tokenizer.h"

namespace nmt {

struct ValidationSet {
  EncodedCorpus encoded;
  std::vector<std::string> references;  ///< raw target lines of the kept pairs
  /// The same, as the target tokenizer gives them back (encode + decode): what a perfect
  /// translation would read, for metrics that compare whole strings (exact match).
  std::vector<std::string> normalised_references;
};

struct ValidationResult {
  double loss = 0;        ///< mean NLL per target token (no label smoothing)
  double perplexity = 0;
  std::map<std::string, double> scores;  ///< metric name -> score, for every registered metric
  long sentences = 0;
  /// Share of the translated sentences whose reference has fewer than 4 words: where most
  /// do, BLEU (of 4-grams) is 0 by definition and says nothing about the model.
  double short_reference_share = 0;

  /// The score train.metric names, higher is better ("loss" gives -loss).
  double metric(const std::string& name) const;
};

/// Loss and perplexity over `data`, every metric of greedy translations. `max_sentences` > 0
/// translates only the first N sentences (loss uses all). The model is read as it was set
/// up (fp32 on its inference path, in eval mode): during training, a network sharing the
/// training weights (network_sharing_weights), so validation never switches the model
/// that trains.
/// `on_progress`, when given, is called after each batch translated: (sentences translated,
/// sentences to translate).
using ValidationProgress = std::function<void(size_t done, size_t total)>;
ValidationResult validate(const InferenceModel& model, const ValidationSet& data, int64_t batch_tokens,
                          int64_t max_sentences, const ValidationProgress& on_progress = {});

}  // namespace nmt
