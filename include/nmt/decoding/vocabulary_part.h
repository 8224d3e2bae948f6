#pragma once
// Decoding over part of the target vocabulary (a shortlist's candidates, text/shortlist.h).
// The searches run unchanged on a model whose vocabulary is the part: its token c stands
// for the target id ids()[c]. Every part holds the special ids, and they come first, so
// pad, unk, bos and eos keep their numbers and the searches' rules about them hold as they
// are. The model scores only the part's columns where it can (Seq2SeqModel::score_only:
// each family multiplies by those rows of its output layer), else the part's columns are
// picked from its scores (an ensemble).
// A part made per sentence (VocabularyPart::per_sentence) is the union of the sentences'
// own sets, and each sentence's hypotheses may use only its own: a line's translation does
// not depend on which lines share its batch. Each step's log-probs are normalised over what
// the row may use, as Marian's and CTranslate2's shortlists normalise over theirs.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "nmt/decoding/search.h"
#include "nmt/models/model.h"

namespace nmt {

class VocabularyPart {
 public:
  /// `ids` (any order, repeats allowed) plus the special ids, within a vocabulary of
  /// `vocab` ids; nmt::Error for an id outside [0, vocab). The columns live on `device`.
  VocabularyPart(std::vector<int64_t> ids, int64_t vocab, const torch::Device& device);
  /// The union of `sentence_ids` (one list per source row of the batch) and the special
  /// ids, each row's hypotheses kept to its own list and the special ids (blocked()).
  static VocabularyPart per_sentence(const std::vector<std::vector<int64_t>>& sentence_ids, int64_t vocab,
                                     const torch::Device& device);

  /// The part's target ids, increasing: column c is ids()[c].
  const std::vector<int64_t>& ids() const { return ids_; }
  /// ids() as a [C] int64 tensor on the device.
  const torch::Tensor& columns() const { return columns_; }
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  int64_t vocab() const { return static_cast<int64_t>(column_of_.size()); }
  /// The column of target id `id`, or -1 when the part lacks it (or it is outside the vocabulary).
  int64_t column(int64_t id) const;
  /// [sentences, size()] bool on the device, true where a sentence may not use a column;
  /// undefined where every row may use the whole part.
  const torch::Tensor& blocked() const { return blocked_; }

 private:
  std::vector<int64_t> ids_;
  std::vector<int32_t> column_of_;  // per target id: its column, or -1
  torch::Tensor columns_;
  torch::Tensor blocked_;
};

/// search(model, source, options, guides) with every hypothesis made of `part`'s tokens
/// (of its row's own, for a part per_sentence: one per source row, else nmt::Error): the
/// guides' prefix and constraint tokens must be in the part (nmt::Error naming one that is
/// not); the hypotheses come back in `model`'s own ids.
std::vector<std::vector<Hypothesis>> search_vocabulary_part(Seq2SeqModel& model, const VocabularyPart& part,
                                                            const torch::Tensor& source, const SearchOptions& options,
                                                            const SearchGuides& guides = {});

}  // namespace nmt
