// Forced decoding: the score and attention of a given target, computed through the
// same step() path the searches use (e.g. to export alignments of a reference).
#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/decoding/best_tokens.h"
#include "nmt/decoding/search.h"
#include "nmt/text/tokenizer.h"
#include "search_internal.h"

namespace nmt {

Hypothesis force_decode(Seq2SeqModel& model, const torch::Tensor& source,
                        const std::vector<int>& target, bool keep_attention) {
  using namespace search_detail;
  SearchOptions scoring;  // no penalties: score == log_prob
  scoring.alpha = 0;
  scoring.coverage = 0;
  const auto sources = describe_source(source, scoring);
  if (sources.size() != 1) throw Error("force_decode: source must be one sentence [1, S]");
  torch::NoGradGuard no_grad;
  const auto device = source.device();
  const KernelChoice kernel = best_tokens_kernel_for(device);
  const DecoderStatePtr state = model.initial_state(model.encode(source));
  RowHistory history(1, keep_attention && model.has_attention(),
                     keep_attention && model.attention_layers() > 0, false);
  state->want_attention = history.needs_attention();
  const std::vector<int64_t> origin{0};
  const auto origin_tensor = to_tensor(origin, device);
  int64_t previous = SpecialIds::kBos;
  for (size_t t = 0;; ++t) {
    StepOutput out = model.step(to_tensor(std::vector<int64_t>{previous}, device), *state);
    const int64_t vocab = out.scores.values().size(1);
    const int64_t token = t < target.size() ? target[t] : SpecialIds::kEos;
    if (token < 0 || token >= vocab)
      throw Error("force_decode: target id " + std::to_string(token) +
                  " is outside the vocabulary of " + std::to_string(vocab));
    const float log_prob = log_probs_of(out.scores, {token}, kernel).front();  // as the searches normalise
    if (t == target.size()) return history.finish(0, log_prob, out, sources[0], scoring);
    history.advance(origin, origin_tensor, true, {token}, {log_prob}, out);
    previous = token;
  }
}

}  // namespace nmt
