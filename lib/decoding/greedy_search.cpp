// Greedy search, and the loop it shares with sampling: one hypothesis per row, all rows
// stepped together. Finished rows leave the batch (DecoderState::select); rows are never
// reordered.
#include <torch/torch.h>

#include <limits>
#include <numeric>

#include "nmt/base/error.h"
#include "nmt/decoding/best_tokens.h"
#include "nmt/decoding/search.h"
#include "nmt/text/tokenizer.h"
#include "search_internal.h"

namespace nmt {
namespace search_detail {

std::vector<Hypothesis> single_path_search(Seq2SeqModel& model, const torch::Tensor& source,
                                           const SearchOptions& options, const SearchGuides& guides,
                                           std::vector<int64_t> streams, const ChooseTokens& choose) {
  options.validate();
  const auto sources = describe_source(source, options, guides);
  torch::NoGradGuard no_grad;
  const auto device = source.device();
  const int64_t batch = source.size(0);
  if (streams.empty()) streams.assign(batch, 0);
  if (static_cast<int64_t>(streams.size()) != batch) throw Error("search: one random stream per source row expected");
  const DecoderStatePtr state = model.initial_state(model.encode(source));
  RowHistory history(batch, options.keep_attention && model.has_attention(),
                     options.keep_attention && model.attention_layers() > 0,
                     options.coverage > 0 && model.has_attention());
  state->want_attention = history.needs_attention();
  std::vector<Hypothesis> results(batch);
  std::vector<int64_t> sentence_of_row(batch), tokens(batch, SpecialIds::kBos);
  std::iota(sentence_of_row.begin(), sentence_of_row.end(), 0);

  for (int64_t step = 0; !sentence_of_row.empty(); ++step) {
    StepOutput out = model.step(to_tensor(tokens, device), *state);
    const auto forbidden = forbidden_tokens(step, options.min_length, sources, sentence_of_row,
                                            out.scores.values().size(1));
    const auto chosen = choose(out.scores, forbidden, streams, step);

    std::vector<int64_t> keep, next_tokens, next_sentences, next_streams;
    std::vector<float> next_log_probs;
    for (size_t row = 0; row < chosen.tokens.size(); ++row) {
      const int64_t s = sentence_of_row[row];
      const float log_prob = chosen.log_probs[row];
      if (log_prob == -std::numeric_limits<float>::infinity()) {
        results[s] = history.cut(row, sources[s], options);  // nothing allowed any more
      } else if (chosen.tokens[row] == SpecialIds::kEos) {
        results[s] = history.finish(row, log_prob, out, sources[s], options);
      } else {
        keep.push_back(static_cast<int64_t>(row));
        next_tokens.push_back(chosen.tokens[row]);
        next_log_probs.push_back(log_prob);
        next_sentences.push_back(s);
        next_streams.push_back(streams[row]);
      }
    }
    if (keep.empty()) break;
    const bool identity = keep.size() == chosen.tokens.size();  // keep is increasing: all rows kept
    const auto index = to_tensor(keep, device);
    history.advance(keep, index, identity, next_tokens, next_log_probs, out);
    if (!identity) state->select(index);
    tokens = std::move(next_tokens);
    sentence_of_row = std::move(next_sentences);
    streams = std::move(next_streams);
  }
  return results;
}

}  // namespace search_detail

std::vector<Hypothesis> greedy_search(Seq2SeqModel& model, const torch::Tensor& source,
                                      const SearchOptions& options, const SearchGuides& guides) {
  const KernelChoice kernel = best_tokens_kernel_for(source.device());  // once, for the model's device
  auto argmax = [kernel](const NextTokenScores& scores, const ForbiddenTokens& forbidden,
                         const std::vector<int64_t>&, int64_t) {
    auto best = best_tokens(scores, 1, forbidden, kernel);
    return search_detail::RowChoice{std::move(best.tokens), std::move(best.log_probs)};
  };
  return search_detail::single_path_search(model, source, options, guides, {}, argmax);
}

}  // namespace nmt
