// Attention takes one of two paths: decoding (no gradient, one query position per row)
// runs its own kernel over the keys and values in place, read through the rows table;
// everything else gathers the rows and takes the batched products (attention_products.h).
// Both must give the same attention, for head widths the kernel special-cases (64) and
// others (20: a partial block of 8), for lengths around its groups of 4 positions, and for
// every rows layout.
#include "support/catch.h"

#include <torch/torch.h>

#include "nmt/models/registry.h"
#include "nmt/models/transformer/multi_head_attention.h"
#include "nmt/models/transformer/transformer.h"
#include "support/small_transformer.h"
#include "support/tensor_diff.h"

namespace {

struct Paths {
  nmt::AttentionOutput kernel;  // no gradient: the one-query kernel
  nmt::AttentionOutput matmul;  // gradient on: the matmul path
};

Paths both_paths(nmt::CrossAttention& attention, const torch::Tensor& x, const nmt::KeyValue& memory,
                 const torch::Tensor& bias) {
  Paths paths;
  {
    torch::NoGradGuard no_grad;
    paths.kernel = attention->forward(x, memory, bias);
  }
  auto matmul = attention->forward(x, memory, bias);
  paths.matmul = {matmul.output.detach(), matmul.weights.detach()};
  return paths;
}

using nmt::test::max_diff;

}  // namespace

TEST_CASE("one-query attention equals the matmul path for every rows layout", "[transformer][attention]") {
  const auto width = GENERATE(std::make_pair<int64_t, int64_t>(256, 4), std::make_pair<int64_t, int64_t>(60, 3));
  const int64_t d_model = width.first, heads = width.second;
  const int64_t length = GENERATE(1, 3, 4, 5, 9, 17);
  const int64_t memory_rows = 3, query_rows = 7;
  CAPTURE(d_model, heads, length);
  torch::manual_seed(11);
  nmt::CrossAttention attention(d_model, heads, 0.0);
  attention->eval();
  nmt::KeyValue memory;
  {
    torch::NoGradGuard no_grad;
    memory = attention->project_memory(torch::randn({memory_rows, length, d_model}));
  }
  REQUIRE(memory.keys.size(3) == d_model / heads);
  const auto x = torch::randn({query_rows, 1, d_model});

  SECTION("one memory row per query row, padding masked") {
    memory.rows = torch::tensor({0, 2, 1, 1, 0, 2, 2}, torch::kLong);
    auto mask = torch::ones({memory_rows, length}, torch::kBool);
    if (length > 1) mask[1].narrow(0, length - 1, 1).fill_(false);
    const auto bias = nmt::padding_bias(mask, torch::kFloat);
    const auto paths = both_paths(attention, x, memory, bias);
    CHECK(max_diff(paths.kernel.output, paths.matmul.output) < 1e-5);
    CHECK(max_diff(paths.kernel.weights, paths.matmul.weights) < 1e-6);
    if (length > 1) CHECK(paths.kernel.weights[2].select(-1, length - 1).abs().max().item<float>() == 0.0f);
  }
  SECTION("a memory row for every position (the self-attention cache's tree)") {
    memory.rows = torch::randint(0, memory_rows, {query_rows, length}, torch::kLong);
    const auto paths = both_paths(attention, x, memory, torch::Tensor());
    CHECK(max_diff(paths.kernel.output, paths.matmul.output) < 1e-5);
    CHECK(max_diff(paths.kernel.weights, paths.matmul.weights) < 1e-6);
  }
  SECTION("query row b reads memory row b") {
    nmt::KeyValue own;
    {
      torch::NoGradGuard no_grad;
      own = attention->project_memory(torch::randn({query_rows, length, d_model}));
    }
    const auto paths = both_paths(attention, x, own, torch::Tensor());
    CHECK(max_diff(paths.kernel.output, paths.matmul.output) < 1e-5);
  }
}

TEST_CASE("attention's kernels are decided when the model is set up, not by a call's tensors",
          "[transformer][attention]") {
  CHECK(nmt::kernel_choice_for(torch::kCPU, torch::kFloat) == nmt::KernelChoice::cpu_fp32);
  CHECK(nmt::kernel_choice_for(torch::kCPU, torch::kDouble) == nmt::KernelChoice::torch_ops);
  CHECK(nmt::kernel_choice_for(torch::kCUDA, torch::kFloat) == nmt::KernelChoice::torch_ops);
  torch::manual_seed(5);
  const auto built = nmt::build_model(nmt::test::small_transformer());
  auto* model = dynamic_cast<nmt::TransformerModel*>(built.get());
  REQUIRE(model != nullptr);
  CHECK(model->kernels() == nmt::KernelChoice::cpu_fp32);  // as built
  model->eval();
  torch::NoGradGuard no_grad;
  const auto source = torch::tensor({{5, 6, 7, 3}}, torch::kLong), target = torch::tensor({{2, 8, 9}}, torch::kLong);
  const auto fp32 = model->forward(source, target).logits;
  // Cast, the model decides again: LibTorch's matmul reads doubles, the kernels do not.
  model->to(torch::kDouble);
  CHECK(model->kernels() == nmt::KernelChoice::torch_ops);
  const auto fp64 = model->forward(source, target).logits;
  CHECK(fp64.scalar_type() == torch::kDouble);
  CHECK(max_diff(fp64.to(torch::kFloat), fp32) < 1e-4);
  model->to(torch::kFloat);
  CHECK(model->kernels() == nmt::KernelChoice::cpu_fp32);
}

TEST_CASE("a decoding step's attention refuses memory it cannot read instead of taking another path",
          "[transformer][attention]") {
  torch::manual_seed(6);
  nmt::CrossAttention attention(32, 4, 0.0);
  attention->eval();
  torch::NoGradGuard no_grad;
  auto memory = attention->project_memory(torch::randn({3, 5, 32}));
  memory.rows = torch::tensor({0, 4}, torch::kLong).unsqueeze(1).expand({2, 2});  // [B, Tk] with Tk != 5
  CHECK_THROWS_WITH(attention->forward(torch::randn({2, 1, 32}), memory, torch::Tensor()),
                    HasSubstring("single-query attention"));
}
