// Greedy search: the argmax token at every step, all sentences stepped together.
// Finished sentences leave the batch (DecoderState::select); rows are never reordered.
#include <torch/torch.h>

#include <limits>

#include "nmt/decoding/search.h"
#include "nmt/text/tokenizer.h"
#include "search_internal.h"

namespace nmt {

std::vector<Hypothesis> greedy_search(Seq2SeqModel& model, const torch::Tensor& source,
                                      const SearchOptions& options) {
  using namespace search_detail;
  options.validate();
  const auto sources = describe_source(source, options);
  torch::NoGradGuard no_grad;
  const auto device = source.device();
  const int64_t batch = source.size(0);
  const DecoderStatePtr state = model.initial_state(model.encode(source));
  RowHistory history(batch, options.keep_attention && model.has_attention(),
                     options.keep_attention && model.attention_layers() > 0,
                     options.coverage > 0 && model.has_attention());
  state->want_attention = history.needs_attention();
  std::vector<Hypothesis> results(batch);
  std::vector<int64_t> sentence_of_row, tokens(batch, SpecialIds::kBos);
  for (int64_t b = 0; b < batch; ++b) sentence_of_row.push_back(b);

  for (int64_t step = 0; !sentence_of_row.empty(); ++step) {
    StepOutput out = model.step(to_tensor(tokens, device), *state);
    // Masked in place (nothing else reads the log-probs): the chosen token's value is
    // still its own log-prob, as forbidden tokens are never chosen while any is allowed.
    auto scores = out.log_probs.to(torch::kFloat);
    std::vector<uint8_t> at_limit;
    for (int64_t s : sentence_of_row) at_limit.push_back(sources[s].max_length == step);
    mask_forbidden(scores, step, options.min_length, at_limit);
    const auto best = scores.max(1);
    const auto values = to_float_vector(std::get<0>(best));
    const auto ids = to_int64_vector(std::get<1>(best));

    std::vector<int64_t> keep, next_tokens, next_sentences;
    std::vector<float> next_log_probs;
    for (size_t row = 0; row < ids.size(); ++row) {
      const int64_t s = sentence_of_row[row];
      if (values[row] == -std::numeric_limits<float>::infinity()) {
        results[s] = history.cut(row, sources[s], options);  // nothing allowed any more
      } else if (ids[row] == SpecialIds::kEos) {
        results[s] = history.finish(row, values[row], out, sources[s], options);
      } else {
        keep.push_back(static_cast<int64_t>(row));
        next_tokens.push_back(ids[row]);
        next_log_probs.push_back(values[row]);
        next_sentences.push_back(s);
      }
    }
    if (keep.empty()) break;
    const bool identity = keep.size() == ids.size();  // keep is increasing: all rows kept
    const auto index = to_tensor(keep, device);
    history.advance(keep, index, identity, next_tokens, next_log_probs, out);
    if (!identity) state->select(index);
    tokens = std::move(next_tokens);
    sentence_of_row = std::move(next_sentences);
  }
  return results;
}

}  // namespace nmt
