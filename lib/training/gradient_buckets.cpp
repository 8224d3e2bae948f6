#include "nmt/training/gradient_buckets.h"

#include <algorithm>

namespace nmt {

std::vector<size_t> backward_order(const std::vector<int64_t>& arrival) {
  std::vector<size_t> order(arrival.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  const auto rank = [&](size_t k) {
    // Arrived ones by arrival, then the others by reverse registration.
    return arrival[k] >= 0 ? arrival[k] : static_cast<int64_t>(arrival.size() + (arrival.size() - 1 - k));
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
  return order;
}

std::vector<std::vector<size_t>> gradient_buckets(const std::vector<size_t>& order, const std::vector<int64_t>& bytes,
                                                  const std::vector<int>& type, int64_t bucket_bytes) {
  std::vector<std::vector<size_t>> buckets;
  int64_t filled = 0;
  for (const size_t k : order) {
    const bool same_type = !buckets.empty() && type[buckets.back().front()] == type[k];
    if (!same_type || filled + bytes[k] > bucket_bytes) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(k);
    filled += bytes[k];
  }
  return buckets;
}

}  // namespace nmt
