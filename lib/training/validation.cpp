#include "nmt/training/validation.h"

#include <cmath>
#include <sstream>

#include "nmt/base/error.h"
#include "nmt/text/batching.h"
#include "nmt/training/loss.h"
#include "nmt/eval/metric.h"
#include "nmt/decoding/search.h"

namespace nmt {
namespace {

double mean_nll(Seq2SeqModel& model, const EncodedCorpus& corpus, int64_t batch_tokens,
                const torch::Device& device) {
  double nll = 0;
  int64_t tokens = 0;
  const auto plan = make_batches(corpus, batch_tokens, 0, /*shuffle=*/false);
  const Loss loss(device, 0.0);
  for (size_t b = 0; b < plan.size(); ++b) {
    const auto batch = collate(corpus, plan.batch(b));
    nll += loss.of_batch(model, batch).nll.item<double>();
    tokens += batch.target_tokens;
  }
  return tokens > 0 ? nll / static_cast<double>(tokens) : 0.0;
}

std::vector<std::string> greedy_translations(Seq2SeqModel& model, const EncodedCorpus& corpus,
                                             const Tokenizer& target_tokenizer, int64_t batch_tokens,
                                             const torch::Device& device, const ValidationProgress& on_progress) {
  std::vector<std::string> outputs(corpus.source.size());
  SearchOptions options;
  options.beam = 1;
  const auto plan = make_batches(corpus, batch_tokens, 0, /*shuffle=*/false);
  size_t done = 0;
  for (size_t b = 0; b < plan.size(); ++b) {
    const auto indices = plan.batch(b);
    const auto batch = collate(corpus, indices);
    const auto hypotheses = greedy_search(model, batch.source.to(device), options);
    for (size_t row = 0; row < indices.size(); ++row)
      outputs[indices[row]] = target_tokenizer.decode(hypotheses[row].tokens);
    done += indices.size();
    if (on_progress) on_progress(done, outputs.size());
  }
  return outputs;
}

EncodedCorpus first_sentences(const EncodedCorpus& corpus, size_t count) {
  EncodedCorpus subset;
  subset.source.assign(corpus.source.begin(), corpus.source.begin() + count);
  subset.target.assign(corpus.target.begin(), corpus.target.begin() + count);
  return subset;
}

}  // namespace

double ValidationResult::metric(const std::string& name) const {
  if (name == "loss") return -loss;
  const auto it = scores.find(name);
  if (it == scores.end()) throw Error("validation has no metric \"" + name + "\"");
  return it->second;
}

ValidationResult validate(const InferenceModel& inference, const ValidationSet& data, int64_t batch_tokens,
                          int64_t max_sentences, const ValidationProgress& on_progress) {
  torch::NoGradGuard no_grad;
  auto& model = inference.network();
  const auto& device = inference.device();
  const auto& target_tokenizer = inference.loaded().target_tokenizer;
  ValidationResult result;
  result.loss = mean_nll(model, data.encoded, batch_tokens, device);
  result.perplexity = std::exp(result.loss);
  size_t count = data.encoded.source.size();
  if (max_sentences > 0) count = std::min(count, static_cast<size_t>(max_sentences));
  const auto subset = first_sentences(data.encoded, count);
  const auto hypotheses = greedy_translations(model, subset, target_tokenizer, batch_tokens, device, on_progress);
  const std::vector<std::string> references(data.references.begin(), data.references.begin() + count);
  const std::vector<std::string> normalised(data.normalised_references.begin(),
                                            data.normalised_references.begin() + count);
  for (const auto& metric : metrics())
    result.scores[metric.name] = metric.score(hypotheses, metric.compares_normalised_text ? normalised : references).score;
  result.sentences = static_cast<long>(count);
  long short_references = 0;
  for (const auto& reference : references) {
    std::istringstream words(reference);
    long count_words = 0;
    for (std::string word; count_words < 4 && words >> word;) ++count_words;
    short_references += count_words < 4;
  }
  result.short_reference_share = count > 0 ? double(short_references) / double(count) : 0.0;
  return result;
}

}  // namespace nmt
