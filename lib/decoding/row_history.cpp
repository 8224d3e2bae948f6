// Per-row token / attention bookkeeping shared by the searches (see search_internal.h).
#include <torch/torch.h>

#include <utility>

#include "nmt/base/error.h"
#include "nmt/text/tokenizer.h"
#include "search_internal.h"

namespace nmt::search_detail {
namespace {

// hist: [rows, t, ...] or undefined (t = 0); step_rows: [rows, ...].
torch::Tensor append_step(const torch::Tensor& hist, const torch::Tensor& step_rows) {
  auto step = step_rows.unsqueeze(1);
  return hist.defined() ? torch::cat({hist, step}, 1) : step;
}

// One row's history [t, ...] followed by this step's row [...] -> [t + 1, ...].
torch::Tensor row_with_step(const torch::Tensor& hist, int64_t row, const torch::Tensor& step) {
  auto last = step[row].unsqueeze(0);
  return hist.defined() ? torch::cat({hist[row], last}, 0) : last;
}

// Attention is trimmed to the sentence's real source positions (the last dimension),
// and copied so a hypothesis never pins the whole batch's history in memory.
torch::Tensor trim(const torch::Tensor& attention, int64_t positions) {
  return attention.narrow(-1, 0, positions).clone();
}

void require_attention(const StepOutput& out, bool layers) {
  if (!out.attention.defined())
    throw Error("search: the model has attention but step() returned none");
  if (layers && out.layer_attention.empty())
    throw Error("search: the model has attention layers but step() returned none");
}

}  // namespace

RowHistory::RowHistory(int64_t rows, bool keep_attention, bool keep_layer_attention,
                       bool track_coverage)
    : paths_(static_cast<size_t>(rows)),
      keep_attention_(keep_attention),
      keep_layer_attention_(keep_layer_attention),
      track_coverage_(track_coverage) {}

Hypothesis RowHistory::finish(int64_t row, float eos_log_prob, const StepOutput& out,
                              const SourceInfo& source, const SearchOptions& options) const {
  Path path = paths_[row];
  path.token_log_probs.push_back(eos_log_prob);
  path.log_prob += eos_log_prob;
  torch::Tensor attention, coverage;
  std::vector<torch::Tensor> layers;
  if (keep_attention_ || track_coverage_) require_attention(out, keep_layer_attention_);
  if (keep_attention_) attention = row_with_step(attention_, row, out.attention.to(torch::kFloat));
  if (keep_layer_attention_) {
    for (size_t l = 0; l < out.layer_attention.size(); ++l) {
      auto hist = l < layer_attention_.size() ? layer_attention_[l] : torch::Tensor();
      layers.push_back(row_with_step(hist, row, out.layer_attention[l].to(torch::kFloat)));
    }
  }
  if (track_coverage_) {
    coverage = out.attention[row].to(torch::kFloat);
    if (coverage_.defined()) coverage = coverage + coverage_[row];
  }
  return make(path, true, attention, std::move(layers), coverage, source, options);
}

Hypothesis RowHistory::cut(int64_t row, const SourceInfo& source,
                           const SearchOptions& options) const {
  torch::Tensor attention, coverage;
  std::vector<torch::Tensor> layers;
  if (keep_attention_) {
    // Cut before the first step: no rows yet, but still a [0, S'] tensor.
    attention = attention_.defined() ? attention_[row] : torch::zeros({0, source.positions});
  }
  if (keep_layer_attention_)
    for (const auto& hist : layer_attention_) layers.push_back(hist[row]);
  if (track_coverage_ && coverage_.defined()) coverage = coverage_[row];
  return make(paths_[row], false, attention, std::move(layers), coverage, source, options);
}

Hypothesis RowHistory::make(const Path& path, bool finished, torch::Tensor attention,
                            std::vector<torch::Tensor> layer_attention,
                            const torch::Tensor& coverage, const SourceInfo& source,
                            const SearchOptions& options) const {
  Hypothesis h;
  h.tokens = path.tokens;
  h.finished = finished;
  h.log_prob = path.log_prob;
  h.token_log_probs = path.token_log_probs;
  std::vector<float> coverage_mass;
  if (coverage.defined()) coverage_mass = to_float_vector(coverage.narrow(0, 0, source.positions));
  h.score = hypothesis_score(h.log_prob, static_cast<int64_t>(h.token_log_probs.size()),
                             coverage_mass, options);
  if (attention.defined()) h.attention = trim(attention, source.positions);
  for (const auto& layer : layer_attention) h.layer_attention.push_back(trim(layer, source.positions));
  return h;
}

void RowHistory::advance(const std::vector<int64_t>& origin, const torch::Tensor& origin_tensor,
                         bool identity, const std::vector<int64_t>& tokens,
                         const std::vector<float>& log_probs, const StepOutput& out) {
  // A row's path is moved at the last use of its origin and copied before that.
  std::vector<int64_t> last_use(paths_.size(), -1);
  for (size_t i = 0; i < origin.size(); ++i) last_use[origin[i]] = static_cast<int64_t>(i);
  std::vector<Path> next;
  next.reserve(origin.size());
  for (size_t i = 0; i < origin.size(); ++i) {
    Path& from = paths_[origin[i]];
    next.push_back(last_use[origin[i]] == static_cast<int64_t>(i) ? std::move(from) : from);
    next.back().tokens.push_back(static_cast<int>(tokens[i]));
    next.back().token_log_probs.push_back(log_probs[i]);
    next.back().log_prob += log_probs[i];
  }
  paths_ = std::move(next);

  if (!keep_attention_ && !track_coverage_) return;
  require_attention(out, keep_layer_attention_);
  auto pick = [&](const torch::Tensor& t) { return identity ? t : t.index_select(0, origin_tensor); };
  const auto step = pick(out.attention.to(torch::kFloat));
  if (keep_attention_) attention_ = append_step(attention_.defined() ? pick(attention_) : attention_, step);
  if (keep_layer_attention_) {
    layer_attention_.resize(out.layer_attention.size());
    for (size_t l = 0; l < out.layer_attention.size(); ++l) {
      auto& hist = layer_attention_[l];
      hist = append_step(hist.defined() ? pick(hist) : hist, pick(out.layer_attention[l].to(torch::kFloat)));
    }
  }
  if (track_coverage_) coverage_ = coverage_.defined() ? pick(coverage_) + step : step;
}

}  // namespace nmt::search_detail
