#include "nmt/models/transformer/self_attention_caches.h"

#include <torch/torch.h>

#include <algorithm>

#include "nmt/base/error.h"

namespace nmt {
namespace {

// Positions a full cache grows by. Growing copies the buffers, so not one at a time;
// nothing else ever copies them, so the spare room costs only memory.
constexpr int64_t kChunk = 16;

bool shared(const torch::Tensor& t) { return t.use_count() > 1 || t.storage().use_count() > 1; }

// `buffer` with at least `rows` rows (dim 0) and `capacity` positions (dim `position_dim`),
// its first `filled` positions kept; unshared. Takes `buffer` out only when nothing can
// throw any more, so a failure leaves it where it was.
torch::Tensor with_room(torch::Tensor& buffer, int64_t rows, int64_t capacity, int64_t filled,
                        int64_t position_dim) {
  if (buffer.size(0) >= rows && buffer.size(position_dim) >= capacity && !shared(buffer)) return std::move(buffer);
  auto sizes = buffer.sizes().vec();
  sizes[0] = std::max(sizes[0], rows);
  sizes[position_dim] = std::max(sizes[position_dim], (capacity + kChunk - 1) / kChunk * kChunk);
  auto grown = torch::empty(sizes, buffer.options());
  // Every old row: hypotheses now at lower rows still point into the higher ones.
  grown.narrow(0, 0, buffer.size(0)).narrow(position_dim, 0, filled)
      .copy_(buffer.narrow(position_dim, 0, filled));
  buffer = torch::Tensor();
  return grown;
}

}  // namespace

SelfAttentionCaches::SelfAttentionCaches(int64_t layers, int64_t rows, int64_t heads,
                                         int64_t head_dim, const torch::TensorOptions& options)
    : keys_(static_cast<size_t>(layers), torch::empty({rows, heads, 0, head_dim}, options)),
      values_(keys_),
      rows_(torch::empty({rows, 0}, options.dtype(torch::kLong))) {}

SelfAttentionCaches::Lent SelfAttentionCaches::open(int64_t rows, int64_t step) {
  if (rows_.size(0) != rows)
    throw Error("transformer: the self-attention cache table has " + std::to_string(rows_.size(0)) +
                " rows for " + std::to_string(rows) + " hypotheses");
  rows_ = with_room(rows_, rows, step + 1, step, 1);
  rows_.select(1, step).copy_(torch::arange(rows, rows_.options()));
  const auto filled = rows_.narrow(1, 0, step + 1);
  Lent lent(*this);
  lent.caches_.reserve(keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i) {
    lent.caches_.push_back({with_room(keys_[i], rows, step + 1, step, 2), torch::Tensor(), filled, step});
    lent.caches_.back().values = with_room(values_[i], rows, step + 1, step, 2);
  }
  return lent;
}

void SelfAttentionCaches::take_back(std::vector<KeyValueCache>& caches) noexcept {
  for (size_t i = 0; i < caches.size(); ++i) {
    if (caches[i].keys.defined()) keys_[i] = std::move(caches[i].keys);
    if (caches[i].values.defined()) values_[i] = std::move(caches[i].values);
  }
  caches.clear();
}

}  // namespace nmt
