#include "nmt/text/batching.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "nmt/base/error.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

template <typename Index>
void shuffle_items(std::vector<Index>& items, uint64_t seed) {
  std::mt19937_64 random(seed);
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[random() % i]);
}

bool within(const TokenCorpus& corpus, size_t pair, size_t max_length) {
  return max_length == 0 ||
         (corpus.source_length(pair) <= max_length && corpus.target_length(pair) <= max_length);
}

// A stable counting sort of `order` by key(pair): linear in the pairs, where a
// comparison sort of 20M pairs takes most of a minute.
template <typename Key>
void stable_counting_sort(std::vector<uint32_t>& order, std::vector<uint32_t>& scratch, Key key) {
  size_t largest = 0;
  for (const auto pair : order) largest = std::max(largest, key(pair));
  std::vector<size_t> starts(largest + 2, 0);
  for (const auto pair : order) ++starts[key(pair) + 1];
  std::partial_sum(starts.begin(), starts.end(), starts.begin());
  scratch.resize(order.size());
  for (const auto pair : order) scratch[starts[key(pair)]++] = pair;
  order.swap(scratch);
}

}  // namespace

void deterministic_shuffle(std::vector<size_t>& items, uint64_t seed) { shuffle_items(items, seed); }
void deterministic_shuffle(std::vector<uint32_t>& items, uint64_t seed) { shuffle_items(items, seed); }

size_t count_within(const TokenCorpus& corpus, size_t max_length) {
  size_t count = 0;
  for (size_t pair = 0; pair < corpus.size(); ++pair) count += within(corpus, pair, max_length);
  return count;
}

std::vector<size_t> BatchPlan::batch(size_t b) const {
  const auto& range = ranges_.at(b);
  return std::vector<size_t>(order_.begin() + range.begin, order_.begin() + range.end);
}

BatchPlan make_batches(const TokenCorpus& corpus, int64_t batch_tokens, uint64_t seed, bool shuffle,
                       size_t max_length) {
  if (corpus.size() >= std::numeric_limits<uint32_t>::max())
    throw Error("a corpus of " + std::to_string(corpus.size()) + " pairs is over the 2^32 - 1 a batch plan holds");
  BatchPlan plan;
  auto& order = plan.order_;
  order.reserve(count_within(corpus, max_length));
  for (size_t pair = 0; pair < corpus.size(); ++pair)
    if (within(corpus, pair, max_length)) order.push_back(static_cast<uint32_t>(pair));
  // Shuffle first so that pairs of equal length land in different batches each epoch.
  if (shuffle) deterministic_shuffle(order, seed);
  // Sorted by (source length, target length), ties in shuffled order: by target length,
  // then stably by source length.
  {
    std::vector<uint32_t> scratch;
    stable_counting_sort(order, scratch, [&](uint32_t pair) { return corpus.target_length(pair); });
    stable_counting_sort(order, scratch, [&](uint32_t pair) { return corpus.source_length(pair); });
  }
  uint32_t begin = 0;
  size_t longest = 0;
  for (uint32_t position = 0; position < order.size(); ++position) {
    const auto pair = order[position];
    const size_t length = std::max(corpus.source_length(pair), corpus.target_length(pair)) + 1;
    const size_t new_longest = std::max(longest, length);
    const size_t rows = position - begin;
    if (rows > 0 && static_cast<int64_t>(new_longest * (rows + 1)) > batch_tokens) {
      plan.ranges_.push_back({begin, position});
      begin = position;
      longest = length;
    } else {
      longest = new_longest;
    }
  }
  if (begin < order.size()) plan.ranges_.push_back({begin, static_cast<uint32_t>(order.size())});
  if (shuffle) {
    std::vector<size_t> batch_order(plan.ranges_.size());
    std::iota(batch_order.begin(), batch_order.end(), 0);
    deterministic_shuffle(batch_order, seed ^ 0x9e3779b97f4a7c15ULL);
    std::vector<BatchPlan::Range> shuffled;
    shuffled.reserve(batch_order.size());
    for (size_t i : batch_order) shuffled.push_back(plan.ranges_[i]);
    plan.ranges_ = std::move(shuffled);
  }
  return plan;
}

torch::Tensor pad_sequences(const std::vector<const std::vector<int>*>& rows, int prepend, int append) {
  size_t longest = 0;
  for (const auto* row : rows) longest = std::max(longest, row->size());
  const int64_t width = static_cast<int64_t>(longest) + (prepend >= 0) + (append >= 0);
  auto tensor = torch::zeros({static_cast<int64_t>(rows.size()), width}, torch::kInt64);
  auto data = tensor.accessor<int64_t, 2>();
  for (size_t r = 0; r < rows.size(); ++r) {
    int64_t column = 0;
    if (prepend >= 0) data[r][column++] = prepend;
    for (int id : *rows[r]) data[r][column++] = id;
    if (append >= 0) data[r][column++] = append;
  }
  return tensor;
}

Batch collate(const TokenCorpus& corpus, const std::vector<size_t>& indices) {
  std::vector<std::vector<int>> source_ids(indices.size()), target_ids(indices.size());
  std::vector<const std::vector<int>*> sources, targets;
  for (size_t row = 0; row < indices.size(); ++row) {
    corpus.read(indices[row], source_ids[row], target_ids[row]);
    sources.push_back(&source_ids[row]);
    targets.push_back(&target_ids[row]);
  }
  Batch batch;
  batch.source = pad_sequences(sources, -1, SpecialIds::kEos);
  batch.target_input = pad_sequences(targets, SpecialIds::kBos, -1);
  batch.target_output = pad_sequences(targets, -1, SpecialIds::kEos);
  batch.target_tokens = batch.target_output.ne(0).sum().item<int64_t>();
  batch.indices = indices;
  return batch;
}

}  // namespace nmt
