#include "nmt/serve/band_choice.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace nmt::serve {

std::vector<size_t> choose_band(const std::vector<PoolLine>& lines, int64_t max_batch_tokens) {
  if (lines.empty()) return {};
  // How many lines of the same length its job has before each line: its turn among them.
  std::vector<size_t> turn(lines.size());
  std::map<std::pair<size_t, int64_t>, size_t> seen;  // (job, length) -> lines so far
  std::vector<size_t> order(lines.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lines[a].line < lines[b].line; });
  for (const size_t i : order) turn[i] = seen[{lines[i].job_turn, lines[i].tokens}]++;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto &x = lines[a], &y = lines[b];
    if (x.tokens != y.tokens) return x.tokens < y.tokens;
    if (turn[a] != turn[b]) return turn[a] < turn[b];
    if (x.job_turn != y.job_turn) return x.job_turn < y.job_turn;
    return x.line < y.line;
  });
  std::vector<std::pair<size_t, size_t>> bands;  // [first, last) in `order`
  size_t first = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > first && static_cast<int64_t>(i + 1 - first) * lines[order[i]].tokens > max_batch_tokens) {
      bands.emplace_back(first, i);
      first = i;
    }
  }
  bands.emplace_back(first, order.size());
  const auto goes_before = [](const std::vector<size_t>& a, const std::vector<size_t>& b) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      if (a[i] != b[i]) return a[i] < b[i];
    return a.size() > b.size();
  };
  std::vector<size_t> best_jobs;
  size_t best = 0;
  for (size_t b = 0; b < bands.size(); ++b) {
    std::vector<size_t> jobs;
    for (size_t i = bands[b].first; i < bands[b].second; ++i) jobs.push_back(lines[order[i]].job_turn);
    std::sort(jobs.begin(), jobs.end());
    jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
    if (b == 0 || goes_before(jobs, best_jobs)) {
      best_jobs = std::move(jobs);
      best = b;
    }
  }
  return {order.begin() + static_cast<std::ptrdiff_t>(bands[best].first),
          order.begin() + static_cast<std::ptrdiff_t>(bands[best].second)};
}

}  // namespace nmt::serve
