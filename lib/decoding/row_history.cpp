// Per-row token / attention bookkeeping shared by the searches (see search_internal.h).
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <utility>

#include "nmt/base/error.h"
#include "nmt/decoding/search_statistics.h"
#include "nmt/text/tokenizer.h"
#include "search_internal.h"

namespace nmt::search_detail {
namespace {

std::atomic<int64_t> elements_copied{0};

void count_copied(const torch::Tensor& written) {
  elements_copied.fetch_add(written.numel(), std::memory_order_relaxed);
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

// A hypothesis's rows of one store, then (when it ends with eos) the eos step's row
// `last`, trimmed; a cut before the first step has none: [0, S'] (undefined `traced`).
torch::Tensor attention_of(const torch::Tensor& traced, const torch::Tensor* last, int64_t positions) {
  torch::Tensor rows = traced;
  if (last != nullptr) {
    const auto row = last->to(torch::kFloat).unsqueeze(0);
    rows = rows.defined() ? torch::cat({rows, row}, 0) : row;
  }
  return rows.defined() ? trim(rows, positions) : torch::zeros({0, positions});
}

}  // namespace

void RowStore::append(const torch::Tensor& rows) {
  const int64_t n = rows.size(0);
  if (!buffer_.defined() || used_ + n > buffer_.size(0)) {
    auto sizes = rows.sizes().vec();
    sizes[0] = std::max<int64_t>({64, used_ + n, buffer_.defined() ? 2 * buffer_.size(0) : 0});
    auto grown = torch::empty(sizes, rows.options());
    if (used_ > 0) {
      grown.narrow(0, 0, used_).copy_(buffer_.narrow(0, 0, used_));
      count_copied(buffer_.narrow(0, 0, used_));
    }
    buffer_ = std::move(grown);
  }
  buffer_.narrow(0, used_, n).copy_(rows);
  count_copied(rows);
  used_ += n;
}

torch::Tensor RowStore::gather(const std::vector<int64_t>& indices) const {
  if (indices.empty()) return torch::Tensor();
  auto rows = buffer_.index_select(0, to_tensor(indices, buffer_.device()));
  count_copied(rows);
  return rows;
}

RowHistory::RowHistory(int64_t rows, bool keep_attention, bool keep_layer_attention,
                       bool track_coverage)
    : log_probs_(static_cast<size_t>(rows), 0.0),
      keep_attention_(keep_attention),
      keep_layer_attention_(keep_layer_attention),
      track_coverage_(track_coverage) {}

RowHistory::Trace RowHistory::trace(int64_t row) const {
  const size_t length = steps_.size();
  Trace trace;
  trace.tokens.resize(length);
  trace.token_log_probs.resize(length);
  const bool stored = keep_attention_ || keep_layer_attention_;
  if (stored) trace.attention_rows.resize(length);
  for (size_t t = length; t-- > 0;) {
    const Step& step = steps_[t];
    const int32_t parent = step.parent[row];
    trace.tokens[t] = step.token[row];
    trace.token_log_probs[t] = step.token_log_prob[row];
    if (stored) trace.attention_rows[t] = step.attention_offset + parent;
    row = parent;
  }
  return trace;
}

Hypothesis RowHistory::finish(int64_t row, float eos_log_prob, const StepOutput& out,
                              const SourceInfo& source, const SearchOptions& options) const {
  if (keep_attention_ || track_coverage_) require_attention(out, keep_layer_attention_);
  auto path = trace(row);
  path.token_log_probs.push_back(eos_log_prob);
  torch::Tensor coverage;
  if (track_coverage_) {
    coverage = out.attention[row].to(torch::kFloat);
    if (coverage_.defined()) coverage = coverage + coverage_[row];
  }
  return make(std::move(path), log_probs_[row] + eos_log_prob, true, &out, row, coverage, source, options);
}

Hypothesis RowHistory::cut(int64_t row, const SourceInfo& source, const SearchOptions& options) const {
  const auto coverage = track_coverage_ && coverage_.defined() ? coverage_[row] : torch::Tensor();
  return make(trace(row), log_probs_[row], false, nullptr, row, coverage, source, options);
}

Hypothesis RowHistory::make(Trace path, double log_prob, bool finished, const StepOutput* eos_step, int64_t row,
                            const torch::Tensor& coverage, const SourceInfo& source,
                            const SearchOptions& options) const {
  Hypothesis h;
  h.tokens = std::move(path.tokens);
  h.finished = finished;
  h.log_prob = log_prob;
  h.token_log_probs = std::move(path.token_log_probs);
  std::vector<float> coverage_mass;
  if (coverage.defined()) coverage_mass = to_float_vector(coverage.narrow(0, 0, source.positions));
  h.score = hypothesis_score(h.log_prob, static_cast<int64_t>(h.token_log_probs.size()), coverage_mass, options);
  if (keep_attention_) {
    const auto last = eos_step != nullptr ? eos_step->attention[row] : torch::Tensor();
    h.attention = attention_of(attention_.gather(path.attention_rows), eos_step ? &last : nullptr, source.positions);
  }
  if (keep_layer_attention_) {
    const size_t layers = eos_step != nullptr ? eos_step->layer_attention.size() : layer_attention_.size();
    for (size_t l = 0; l < layers; ++l) {
      const auto traced = l < layer_attention_.size() ? layer_attention_[l].gather(path.attention_rows) : torch::Tensor();
      const auto last = eos_step != nullptr ? eos_step->layer_attention[l][row] : torch::Tensor();
      h.layer_attention.push_back(attention_of(traced, eos_step ? &last : nullptr, source.positions));
    }
  }
  return h;
}

void RowHistory::advance(const std::vector<int64_t>& origin, const torch::Tensor& origin_tensor,
                         bool identity, const std::vector<int64_t>& tokens,
                         const std::vector<float>& log_probs, const StepOutput& out) {
  Step step;
  step.parent.assign(origin.begin(), origin.end());
  step.token.assign(tokens.begin(), tokens.end());
  step.token_log_prob = log_probs;
  std::vector<double> next_log_probs(origin.size());
  for (size_t i = 0; i < origin.size(); ++i) next_log_probs[i] = log_probs_[origin[i]] + log_probs[i];
  log_probs_ = std::move(next_log_probs);
  if (keep_attention_ || track_coverage_) {
    require_attention(out, keep_layer_attention_);
    const auto attention = out.attention.to(torch::kFloat);
    // Stored under the rows that produced them, where the back-pointers find them; every
    // store takes the same rows each step, so one offset serves them all.
    step.attention_offset = stored_rows_;
    if (keep_attention_) attention_.append(attention);
    if (keep_layer_attention_) {
      layer_attention_.resize(out.layer_attention.size());
      for (size_t l = 0; l < out.layer_attention.size(); ++l)
        layer_attention_[l].append(out.layer_attention[l].to(torch::kFloat));
    }
    if (keep_attention_ || keep_layer_attention_) stored_rows_ += attention.size(0);
    if (track_coverage_) {
      auto pick = [&](const torch::Tensor& t) { return identity ? t : t.index_select(0, origin_tensor); };
      coverage_ = coverage_.defined() ? pick(coverage_ + attention) : pick(attention);
    }
  }
  steps_.push_back(std::move(step));
}

int64_t attention_history_elements_copied() { return elements_copied.load(std::memory_order_relaxed); }

}  // namespace nmt::search_detail
