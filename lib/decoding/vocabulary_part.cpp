#include "nmt/decoding/vocabulary_part.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <string>

#include "nmt/base/error.h"
#include "nmt/decoding/strategy.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

// The inner model's state, and per row the part's columns its sentence may not use.
struct PartState : DecoderState {
  DecoderStatePtr inner;
  torch::Tensor blocked;  // [rows, C] bool (undefined: nothing blocked)

  void reorder(const torch::Tensor& index) override {
    inner->reorder(index);
    if (blocked.defined()) blocked = blocked.index_select(0, index);
  }
  void select(const torch::Tensor& index) override {
    inner->select(index);
    if (blocked.defined()) blocked = blocked.index_select(0, index);
  }
  DecoderStatePtr clone() const override {
    auto copy = std::make_unique<PartState>();
    copy->inner = inner->clone();
    copy->blocked = blocked;
    copy->step = step;
    copy->want_attention = want_attention;
    return copy;
  }
};

// `inner` seen through a part of its target vocabulary: token c is inner's part.ids()[c].
// What the searches drive; it lives for one search.
class PartModel : public Seq2SeqModel {
 public:
  PartModel(Seq2SeqModel& inner, const VocabularyPart& part) : inner_(inner), part_(part) {}

  EncoderOutput encode(const torch::Tensor& source) override { return inner_.encode(source); }

  DecoderStatePtr initial_state(const EncoderOutput& encoded) override {
    auto state = std::make_unique<PartState>();
    state->inner = inner_.initial_state(encoded);
    inner_scores_part_ = inner_.score_only(*state->inner, part_.columns());
    state->blocked = part_.blocked();
    return state;
  }

  StepOutput step(const torch::Tensor& previous_tokens, DecoderState& base) override {
    auto& state = state_as<PartState>(base);
    state.inner->want_attention = state.want_attention;
    StepOutput out = inner_.step(part_.columns().index_select(0, previous_tokens), *state.inner);
    ++state.step;
    auto values = out.scores.values();
    if (!inner_scores_part_) values = values.index_select(1, part_.columns());
    if (state.blocked.defined()) values.masked_fill_(state.blocked, -std::numeric_limits<float>::infinity());
    // Logits whichever they were: the searches normalise over what each row may use.
    out.scores = NextTokenScores::logits(std::move(values));
    return out;
  }

  ForwardOutput forward(const torch::Tensor&, const torch::Tensor&) override {
    throw Error("a model restricted to part of its vocabulary decodes only; it does not train");
  }

  bool has_attention() const override { return inner_.has_attention(); }
  int64_t attention_layers() const override { return inner_.attention_layers(); }
  int64_t alignment_layer() const override { return inner_.alignment_layer(); }
  int64_t max_positions() const override { return inner_.max_positions(); }

 private:
  Seq2SeqModel& inner_;
  const VocabularyPart& part_;
  bool inner_scores_part_ = false;
};

std::vector<int> to_columns(const std::vector<int>& tokens, const VocabularyPart& part, const char* what) {
  std::vector<int> columns;
  columns.reserve(tokens.size());
  for (const int token : tokens) {
    const int64_t column = part.column(token);
    if (column < 0)
      throw Error(std::string("search: ") + what + " token " + std::to_string(token) +
                  " is not in the part of the vocabulary being decoded");
    columns.push_back(static_cast<int>(column));
  }
  return columns;
}

SearchGuides guides_in_columns(const SearchGuides& guides, const VocabularyPart& part) {
  SearchGuides mapped;
  mapped.line_numbers = guides.line_numbers;
  for (const auto& prefix : guides.prefixes) mapped.prefixes.push_back(to_columns(prefix, part, "prefix"));
  for (const auto& phrases : guides.constraints) {
    auto& row = mapped.constraints.emplace_back();
    for (const auto& phrase : phrases) row.push_back(to_columns(phrase, part, "constraint"));
  }
  return mapped;
}

}  // namespace

VocabularyPart::VocabularyPart(std::vector<int64_t> ids, int64_t vocab, const torch::Device& device)
    : ids_(std::move(ids)), column_of_(static_cast<size_t>(std::max<int64_t>(vocab, 0)), -1) {
  if (vocab <= SpecialIds::kEos) throw Error("a vocabulary part needs a vocabulary of more than the special ids");
  for (int64_t special : {SpecialIds::kPad, SpecialIds::kUnk, SpecialIds::kBos, SpecialIds::kEos})
    ids_.push_back(special);
  for (const int64_t id : ids_)
    if (id < 0 || id >= vocab)
      throw Error("a vocabulary part holds id " + std::to_string(id) + ", outside the vocabulary of " +
                  std::to_string(vocab));
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
  for (size_t c = 0; c < ids_.size(); ++c) column_of_[static_cast<size_t>(ids_[c])] = static_cast<int32_t>(c);
  columns_ = torch::tensor(torch::ArrayRef<int64_t>(ids_), torch::kLong).to(device);
}

VocabularyPart VocabularyPart::per_sentence(const std::vector<std::vector<int64_t>>& sentence_ids, int64_t vocab,
                                            const torch::Device& device) {
  std::vector<int64_t> all;
  for (const auto& ids : sentence_ids) all.insert(all.end(), ids.begin(), ids.end());
  VocabularyPart part(std::move(all), vocab, device);
  auto blocked = torch::ones({static_cast<int64_t>(sentence_ids.size()), part.size()}, torch::kBool);
  auto* rows = blocked.data_ptr<bool>();
  for (size_t b = 0; b < sentence_ids.size(); ++b) {
    bool* row = rows + static_cast<int64_t>(b) * part.size();
    std::fill(row, row + SpecialIds::kEos + 1, false);  // the special ids are columns 0..3 of every part
    for (const int64_t id : sentence_ids[b]) row[part.column(id)] = false;
  }
  part.blocked_ = blocked.to(device);
  return part;
}

int64_t VocabularyPart::column(int64_t id) const {
  return id >= 0 && id < vocab() ? column_of_[static_cast<size_t>(id)] : -1;
}

std::vector<std::vector<Hypothesis>> search_vocabulary_part(Seq2SeqModel& model, const VocabularyPart& part,
                                                            const torch::Tensor& source, const SearchOptions& options,
                                                            const SearchGuides& guides) {
  if (part.blocked().defined() && part.blocked().size(0) != source.size(0))
    throw Error("search: a vocabulary part for " + std::to_string(part.blocked().size(0)) + " sentences, a source of " +
                std::to_string(source.size(0)) + " rows");
  PartModel restricted(model, part);
  auto results = search(restricted, source, options, guides_in_columns(guides, part));
  for (auto& hypotheses : results)
    for (auto& hypothesis : hypotheses)
      for (int& token : hypothesis.tokens) token = static_cast<int>(part.ids()[static_cast<size_t>(token)]);
  return results;
}

}  // namespace nmt
