// Attention's batched products (q k^T, weights v) computed slice by slice in one parallel
// loop must equal torch::matmul's, forward and both backward products, for head widths the
// kernels special-case (64) and others (20: a partial block of 8 lanes; 8: one block), for
// query and key lengths around the kernels' groups of 4 rows, and for inputs read in place
// from a fused projection (rows 3 x H x dk apart) as well as contiguous ones.
#include "support/catch.h"

#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/kernels/attention_products.h"
#include "support/tensor_diff.h"

namespace {

using nmt::test::max_diff;

// q [B, H, Tq, dk] and k, v [B, H, Tk, dk] as split_heads makes them: permuted views of
// [B, T, parts x H x dk] projections, leaves of the autograd graph.
struct Inputs {
  torch::Tensor query_projection, memory_projection;
  torch::Tensor query, keys, values;
};

Inputs make_inputs(int64_t batch, int64_t heads, int64_t query_length, int64_t key_length, int64_t dk,
                   bool contiguous) {
  Inputs in;
  in.query_projection = torch::randn({batch, query_length, heads * dk}).requires_grad_();
  in.memory_projection = torch::randn({batch, key_length, 2 * heads * dk}).requires_grad_();
  in.query = in.query_projection.view({batch, query_length, heads, dk}).permute({0, 2, 1, 3});
  auto memory = in.memory_projection.view({batch, key_length, 2, heads, dk}).permute({2, 0, 3, 1, 4}).unbind(0);
  in.keys = memory[0];
  in.values = memory[1];
  if (contiguous) in.query = in.query.contiguous(), in.keys = in.keys.contiguous(), in.values = in.values.contiguous();
  return in;
}

struct Result {
  torch::Tensor scores, context, grad_query, grad_memory;
};

// softmax(q k^T) v, then a random-weighted sum of the context as the loss: every product's
// gradient is exercised with values that are not all equal.
Result attend(const Inputs& in, bool kernels, const torch::Tensor& loss_weights) {
  in.query_projection.mutable_grad() = torch::Tensor();
  in.memory_projection.mutable_grad() = torch::Tensor();
  Result r;
  r.scores = kernels ? nmt::attention_scores(in.query, in.keys) : torch::matmul(in.query, in.keys.transpose(-2, -1));
  const auto weights = torch::softmax(r.scores, -1);
  r.context = kernels ? nmt::attention_context(weights, in.values) : torch::matmul(weights, in.values);
  (r.context * loss_weights).sum().backward();
  r.grad_query = in.query_projection.grad().clone();
  r.grad_memory = in.memory_projection.grad().clone();
  return r;
}

}  // namespace

TEST_CASE("attention's batched products equal torch::matmul, values and gradients", "[transformer][attention]") {
  const int64_t dk = GENERATE(64, 20, 8);
  const int64_t query_length = GENERATE(1, 4, 9);
  const int64_t key_length = GENERATE(1, 3, 5, 12, 17);
  const bool contiguous = GENERATE(false, true);
  const int64_t batch = 3, heads = 2;
  CAPTURE(dk, query_length, key_length, contiguous);
  torch::manual_seed(5);
  const auto in = make_inputs(batch, heads, query_length, key_length, dk, contiguous);
  REQUIRE(nmt::attention_products_apply(in.query, in.keys, in.values));
  const auto loss_weights = torch::randn({batch, heads, query_length, dk});

  const auto reference = attend(in, false, loss_weights);
  const auto kernels = attend(in, true, loss_weights);
  CHECK(max_diff(kernels.scores, reference.scores) < 1e-4);
  CHECK(max_diff(kernels.context, reference.context) < 1e-5);
  CHECK(max_diff(kernels.grad_query, reference.grad_query) < 1e-4);
  CHECK(max_diff(kernels.grad_memory, reference.grad_memory) < 1e-4);
  // The context's memory is [B, Tq, H, dk]: merging the heads is a view.
  CHECK(kernels.context.transpose(1, 2).is_contiguous());
}

TEST_CASE("attention's batched products refuse what they cannot read", "[transformer][attention]") {
  const auto query = torch::randn({2, 4, 3, 16});
  const auto keys = torch::randn({2, 4, 5, 16});
  CHECK(nmt::attention_products_apply(query, keys, keys));
  CHECK_FALSE(nmt::attention_products_apply(query.to(torch::kDouble), keys, keys));
  CHECK_FALSE(nmt::attention_products_apply(query, keys.narrow(3, 0, 8), keys));       // widths differ
  CHECK_FALSE(nmt::attention_products_apply(query, keys, keys.narrow(2, 0, 4)));       // keys and values differ
  CHECK_FALSE(nmt::attention_products_apply(query.narrow(0, 0, 1), keys, keys));       // batch differs
  const auto strided = torch::randn({2, 4, 3, 32}).slice(3, 0, 32, 2);                 // last stride 2
  CHECK_FALSE(nmt::attention_products_apply(strided, keys, keys));
  CHECK_FALSE(nmt::attention_products_apply(query.flatten(0, 1), keys, keys));         // not 4-D
  CHECK_THROWS_AS(nmt::attention_scores(query, keys.narrow(3, 0, 8)), nmt::Error);
  const auto weights = torch::softmax(torch::randn({2, 4, 3, 5}), -1);
  CHECK_NOTHROW(nmt::attention_context(weights, keys));
  CHECK_THROWS_AS(nmt::attention_context(weights.narrow(3, 0, 4), keys), nmt::Error);  // Tk differs
  CHECK_THROWS_AS(nmt::attention_context(weights, keys.narrow(1, 0, 2)), nmt::Error);  // heads differ
}

TEST_CASE("attention's batched products handle empty sizes as torch::matmul does", "[transformer][attention]") {
  const auto check = [](int64_t batch, int64_t query_length, int64_t key_length, int64_t dk) {
    CAPTURE(batch, query_length, key_length, dk);
    const auto query = torch::randn({batch, 2, query_length, dk});
    const auto keys = torch::randn({batch, 2, key_length, dk});
    const auto scores = nmt::attention_scores(query, keys);
    CHECK(scores.sizes() == torch::IntArrayRef({batch, 2, query_length, key_length}));
    CHECK(torch::equal(scores, torch::matmul(query, keys.transpose(-2, -1))));
    const auto weights = torch::randn({batch, 2, query_length, key_length});
    const auto context = nmt::attention_context(weights, keys);
    CHECK(context.sizes() == torch::IntArrayRef({batch, 2, query_length, dk}));
    CHECK(torch::equal(context, torch::matmul(weights, keys)));
  };
  check(0, 3, 4, 8);
  check(2, 0, 4, 8);
  check(2, 3, 0, 8);  // no keys: a context of zeros
  check(2, 3, 4, 0);  // no width: scores of zeros
}

TEST_CASE("attention's batched products give only the gradients asked for, for any incoming gradient",
          "[transformer][attention]") {
  torch::manual_seed(6);
  const auto query = torch::randn({2, 3, 4, 20});
  const auto keys = torch::randn({2, 3, 5, 20}).requires_grad_();
  const auto values = torch::randn({2, 3, 5, 20}).requires_grad_();
  const auto keys_reference = keys.detach().clone().requires_grad_();
  const auto values_reference = values.detach().clone().requires_grad_();
  // sum(): the incoming gradient is one value expanded (all strides 0).
  nmt::attention_context(torch::softmax(nmt::attention_scores(query, keys), -1), values).sum().backward();
  torch::matmul(torch::softmax(torch::matmul(query, keys_reference.transpose(-2, -1)), -1), values_reference)
      .sum()
      .backward();
  CHECK_FALSE(query.grad().defined());
  CHECK(max_diff(keys.grad(), keys_reference.grad()) < 1e-4);
  CHECK(max_diff(values.grad(), values_reference.grad()) < 1e-4);
}
