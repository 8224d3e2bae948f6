#include "nmt/text/batching.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "nmt/base/error.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

// Fisher-Yates: items[i - 1] swaps with items[random() % i], i from n down to 2. The
// partners are drawn kAhead swaps early and their cache lines fetched meanwhile: over
// 20M pairs the random swaps wait on memory (half the time, measured), and the order of
// draws, so the result, stays the same.
template <typename Index>
void shuffle_items(std::vector<Index>& items, uint64_t seed) {
  constexpr size_t kAhead = 32;
  std::mt19937_64 random(seed);
  const size_t n = items.size();
  if (n < 2) return;
  const size_t swaps = n - 1;
  size_t partners[kAhead];
  size_t drawn = 0;
  auto draw = [&] {
    const size_t partner = random() % (n - drawn);
    partners[drawn % kAhead] = partner;
    __builtin_prefetch(&items[partner], 1);
    ++drawn;
  };
  while (drawn < std::min(swaps, kAhead)) draw();
  for (size_t s = 0; s < swaps; ++s) {
    const size_t partner = partners[s % kAhead];
    if (drawn < swaps) draw();  // reuses slot s % kAhead, read just above
    std::swap(items[n - 1 - s], items[partner]);
  }
}

bool within(const TokenCorpus& corpus, size_t pair, size_t max_length) {
  return max_length == 0 ||
         (corpus.source_length(pair) <= max_length && corpus.target_length(pair) <= max_length);
}

// The pairs of `order` stably sorted by (source length, target length): a counting sort,
// linear in the pairs (a comparison sort of 20M pairs takes most of a minute). The lengths
// are read once, in `order`'s (random) order, into one bucket id per position; counting
// and placing then run sequentially. Returns the number of pairs per bucket, where bucket
// = source length x (longest target + 1) + target length.
// Beyond this many (source, target) length combinations the counts would take more
// memory than the plan: 2^22 of them take 16 MB (train.max_length 100 gives 10,201).
constexpr size_t kMaxBuckets = size_t(1) << 22;

template <typename Bucket>
std::vector<uint32_t> sort_into_buckets(const TokenCorpus& corpus, std::vector<uint32_t>& order,
                                        size_t target_span, size_t buckets) {
  std::vector<uint32_t> counts(buckets, 0);
  {
    std::vector<Bucket> bucket_of(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      const auto pair = order[i];
      bucket_of[i] = static_cast<Bucket>(corpus.source_length(pair) * target_span + corpus.target_length(pair));
      ++counts[bucket_of[i]];
    }
    std::vector<size_t> next(buckets, 0);
    for (size_t b = 1; b < buckets; ++b) next[b] = next[b - 1] + counts[b - 1];
    std::vector<uint32_t> sorted(order.size());
    for (size_t i = 0; i < order.size(); ++i) sorted[next[bucket_of[i]]++] = order[i];
    order.swap(sorted);
  }
  return counts;
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
  size_t longest_source = 0, longest_target = 0;
  for (size_t pair = 0; pair < corpus.size(); ++pair) {
    if (!within(corpus, pair, max_length)) continue;
    order.push_back(static_cast<uint32_t>(pair));
    longest_source = std::max(longest_source, corpus.source_length(pair));
    longest_target = std::max(longest_target, corpus.target_length(pair));
  }
  // Shuffle first so that pairs of equal length land in different batches each epoch.
  if (shuffle) deterministic_shuffle(order, seed);
  // Batches are cut from the sorted order: a pair joins the batch while the padded size,
  // rows x (longest side + 1), stays within batch_tokens.
  uint32_t begin = 0, position = 0;
  size_t longest = 0;
  auto cut = [&](size_t length) {
    const size_t new_longest = std::max(longest, length);
    const size_t rows = position - begin;
    if (rows > 0 && static_cast<int64_t>(new_longest * (rows + 1)) > batch_tokens) {
      plan.ranges_.push_back({begin, position});
      begin = position;
      longest = length;
    } else {
      longest = new_longest;
    }
    ++position;
  };
  // Sorted by (source length, target length), ties in shuffled order.
  const size_t target_span = longest_target + 1, buckets = (longest_source + 1) * target_span;
  if (buckets <= kMaxBuckets) {
    const auto counts = buckets <= 65536 ? sort_into_buckets<uint16_t>(corpus, order, target_span, buckets)
                                         : sort_into_buckets<uint32_t>(corpus, order, target_span, buckets);
    for (size_t bucket = 0; bucket < buckets; ++bucket)  // the lengths from the buckets: no pair is read again
      for (uint32_t n = 0; n < counts[bucket]; ++n) cut(std::max(bucket / target_span, bucket % target_span) + 1);
  } else {  // very long pairs and no length limit (small validation sets): a comparison sort
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(corpus.source_length(a), corpus.target_length(a)) <
             std::make_pair(corpus.source_length(b), corpus.target_length(b));
    });
    for (const auto pair : order) cut(std::max(corpus.source_length(pair), corpus.target_length(pair)) + 1);
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
