#include "nmt/text/batching.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "nmt/text/tokenizer.h"

namespace nmt {

void deterministic_shuffle(std::vector<size_t>& items, uint64_t seed) {
  std::mt19937_64 random(seed);
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[random() % i]);
}

std::vector<std::vector<size_t>> make_batches(const EncodedCorpus& corpus, int64_t batch_tokens,
                                              uint64_t seed, bool shuffle) {
  std::vector<size_t> order(corpus.source.size());
  std::iota(order.begin(), order.end(), 0);
  // Shuffle first so that pairs of equal length land in different batches each epoch.
  if (shuffle) deterministic_shuffle(order, seed);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto la = std::make_pair(corpus.source[a].size(), corpus.target[a].size());
    const auto lb = std::make_pair(corpus.source[b].size(), corpus.target[b].size());
    return la < lb;
  });
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  size_t longest = 0;
  for (size_t index : order) {
    const size_t length = std::max(corpus.source[index].size(), corpus.target[index].size()) + 1;
    const size_t new_longest = std::max(longest, length);
    if (!current.empty() && static_cast<int64_t>(new_longest * (current.size() + 1)) > batch_tokens) {
      batches.push_back(std::move(current));
      current.clear();
      longest = length;
    } else {
      longest = new_longest;
    }
    current.push_back(index);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  if (shuffle) {
    std::vector<size_t> batch_order(batches.size());
    std::iota(batch_order.begin(), batch_order.end(), 0);
    deterministic_shuffle(batch_order, seed ^ 0x9e3779b97f4a7c15ULL);
    std::vector<std::vector<size_t>> shuffled;
    shuffled.reserve(batches.size());
    for (size_t i : batch_order) shuffled.push_back(std::move(batches[i]));
    batches = std::move(shuffled);
  }
  return batches;
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

Batch collate(const EncodedCorpus& corpus, const std::vector<size_t>& indices) {
  std::vector<const std::vector<int>*> sources, targets;
  for (size_t i : indices) {
    sources.push_back(&corpus.source[i]);
    targets.push_back(&corpus.target[i]);
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
