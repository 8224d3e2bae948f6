// nmt::dropout: LibTorch's inverted dropout, with the mask drawn in parallel from a seed
// of the default generator.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/kernels/dropout.h"

namespace {

torch::Tensor dropped(const torch::Tensor& x, double p, uint64_t seed) {
  torch::manual_seed(seed);
  return nmt::dropout(x, p, true);
}

}  // namespace

TEST_CASE("dropout keeps 1 - p of the elements, scaled by 1 / (1 - p)", "[dropout]") {
  const auto x = torch::rand({1000, 1000}) + 1;  // no zeros of its own
  const auto out = dropped(x, 0.3, 1);
  const auto kept = out.ne(0);
  CHECK(kept.to(torch::kDouble).mean().item<double>() == Approx(0.7).margin(0.003));
  const auto scale = static_cast<float>(1.0 / 0.7);
  CHECK(torch::equal(out.masked_select(kept), x.masked_select(kept) * scale));
  // Neighbouring elements are dropped independently.
  const auto mask = kept.to(torch::kDouble).flatten();
  const auto a = mask.narrow(0, 0, mask.numel() - 1) - 0.7, b = mask.narrow(0, 1, mask.numel() - 1) - 0.7;
  CHECK(std::abs((a * b).mean().item<double>() / 0.21) < 0.01);
}

TEST_CASE("dropout's gradient is its mask, scaled", "[dropout]") {
  auto x = torch::ones({64, 33}, torch::requires_grad());
  const auto out = dropped(x, 0.25, 2);
  out.sum().backward();
  CHECK(torch::equal(x.grad(), out.detach()));
}

TEST_CASE("dropout masks follow the generator's seed, whatever the threads and strides", "[dropout]") {
  const auto x = torch::randn({300, 200});
  const auto first = dropped(x, 0.1, 7);
  CHECK(torch::equal(first, dropped(x, 0.1, 7)));
  torch::manual_seed(7);
  const auto again = nmt::dropout(x, 0.1, true);
  CHECK(!torch::equal(again, nmt::dropout(x, 0.1, true)));  // the next call draws another mask
  const int threads = torch::get_num_threads();
  torch::set_num_threads(1);
  const auto one_thread = dropped(x, 0.1, 7);
  torch::set_num_threads(threads);
  CHECK(torch::equal(first, one_thread));
  const auto transposed = x.t().contiguous().t();  // the same values, column-major
  CHECK(torch::equal(first, dropped(transposed, 0.1, 7).contiguous()));
}

TEST_CASE("dropout outside training, at 0, or with a bad probability", "[dropout]") {
  const auto x = torch::randn({4, 5});
  CHECK(nmt::dropout(x, 0.5, false).is_same(x));
  CHECK(nmt::dropout(x, 0.0, true).is_same(x));
  CHECK_THROWS_AS(nmt::dropout(x, 1.0, true), nmt::Error);
  CHECK_THROWS_AS(nmt::dropout(x, -0.1, true), nmt::Error);
}
