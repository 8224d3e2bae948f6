// bf16 and int8 weights packed once for oneDNN's matmul on AMX (nmt/models/onednn_amx_weight.h):
// the int8 sums the GEMM function computes, exactly; the bf16 products of LibTorch's linear;
// at every row count a decoder or an encoder meets, through one primitive per row count.
// Checked where oneDNN runs these products on AMX (an Intel Sapphire Rapids or later);
// elsewhere the row rounding alone is, and the rest says it was not checked.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/kernels/int8_rows.h"
#include "nmt/models/int8_linear.h"
#include "nmt/models/linear.h"
#include "nmt/models/onednn_amx_weight.h"

using namespace nmt;

namespace {

bool amx_runs(AmxProduct product) {
  if (onednn_amx_enabled(product)) return true;
  WARN("not checked: oneDNN does not run this product on AMX here (" << amx_probe(product)
                                                                       << "), or NMT_AMX=off");
  return false;
}

// The int32 sums of u8 x s8 in int64, one product at a time.
torch::Tensor exact_sums(const torch::Tensor& inputs, const torch::Tensor& weights) {
  return torch::matmul(inputs.to(torch::kLong), weights.to(torch::kLong).t());
}

}  // namespace

TEST_CASE("a product of a row count computes that many rows, rounded up beyond 64", "[precision][onednn]") {
  CHECK(amx_rows_computed(0) == 0);
  CHECK(amx_rows_computed(1) == 1);
  CHECK(amx_rows_computed(64) == 64);
  CHECK(amx_rows_computed(65) == 80);
  CHECK(amx_rows_computed(1024) == 1024);
  CHECK(amx_rows_computed(1025) == 1280);
  for (int64_t rows = 1; rows < 3000; ++rows) {
    const int64_t computed = amx_rows_computed(rows);
    CHECK(computed >= rows);
    CHECK(computed - rows < (rows <= 1024 ? 16 : 256));
  }
}

TEST_CASE("a packed AMX int8 weight computes the exact int32 sums at any row count", "[precision][onednn][int8]") {
  if (!amx_runs(AmxProduct::int8)) return;
  torch::manual_seed(8);
  for (const int64_t out : {1, 33, 256, 1000}) {
    const auto weights = torch::randint(-127, 128, {out, 64}, torch::kChar);
    const OnednnAmxWeight packed(AmxProduct::int8, weights);
    for (const int64_t rows : {0, 1, 2, 5, 16, 63, 64, 65, 320, 1025}) {
      INFO("rows " << rows << ", out " << out);
      const auto inputs = torch::randint(0, 256, {rows, 64}, torch::kByte);
      const auto sums = packed.apply(inputs);
      REQUIRE(sums.sizes() == torch::IntArrayRef({rows, out}));
      REQUIRE(sums.scalar_type() == torch::kInt);
      CHECK(torch::equal(sums.to(torch::kLong), exact_sums(inputs, weights)));
    }
  }
}

TEST_CASE("a packed AMX bf16 weight computes torch's bf16 linear, with its bias", "[precision][onednn]") {
  if (!amx_runs(AmxProduct::bf16)) return;
  torch::manual_seed(9);
  const auto weight = torch::randn({300, 96}).to(torch::kBFloat16);
  const auto bias = torch::randn({300});
  const OnednnAmxWeight with_bias(AmxProduct::bf16, weight, bias), without_bias(AmxProduct::bf16, weight);
  for (const int64_t rows : {0, 1, 3, 17, 64, 100, 1100}) {
    INFO("rows " << rows);
    const auto x = torch::randn({rows, 96});
    // The same bf16 inputs and weights, the products summed in fp32 by LibTorch.
    const auto expected = torch::nn::functional::linear(x.to(torch::kBFloat16).to(torch::kFloat), weight.to(torch::kFloat));
    const auto y = with_bias.apply(x);
    REQUIRE(y.sizes() == torch::IntArrayRef({rows, 300}));
    REQUIRE(y.scalar_type() == torch::kFloat);
    CHECK(torch::allclose(y, expected + bias, 1e-3, 1e-3));
    CHECK(torch::allclose(without_bias.apply(x), expected, 1e-3, 1e-3));
  }
  // A strided view is read as it is.
  const auto wide = torch::randn({10, 192});
  CHECK(torch::allclose(without_bias.apply(wide.slice(1, 0, 192, 2)),
                        torch::nn::functional::linear(wide.slice(1, 0, 192, 2).to(torch::kBFloat16).to(torch::kFloat),
                                                      weight.to(torch::kFloat)),
                        1e-3, 1e-3));
}

TEST_CASE("a packed AMX weight makes one primitive per row count it computes", "[precision][onednn]") {
  if (!amx_runs(AmxProduct::int8)) return;
  // A model's width: oneDNN takes AMX for it (for a few columns it may take AVX-512).
  const OnednnAmxWeight packed(AmxProduct::int8, torch::ones({256, 256}, torch::kChar));
  CHECK(packed.primitives_made() == 0);
  packed.apply(torch::ones({5, 256}, torch::kByte));
  packed.apply(torch::ones({5, 256}, torch::kByte));
  CHECK(packed.primitives_made() == 1);
  packed.apply(torch::ones({70, 256}, torch::kByte));
  packed.apply(torch::ones({75, 256}, torch::kByte));  // both compute 80 rows
  CHECK(packed.primitives_made() == 2);
  CHECK_THAT(packed.implementation(), HasSubstring("amx"));
  CHECK_THROWS_WITH(packed.apply(torch::ones({2, 31}, torch::kByte)), HasSubstring("expected [rows, 256]"));
  CHECK_THROWS_WITH(packed.apply(torch::ones({2, 256})), HasSubstring("expected u8 inputs"));
  CHECK_THROWS_WITH(OnednnAmxWeight(AmxProduct::int8, torch::ones({8, 32})), HasSubstring("a 2-D int8 tensor"));
}

TEST_CASE("int8 and bf16 layers give the same results through their AMX packing", "[precision][onednn][int8]") {
  torch::manual_seed(10);
  const auto weight = torch::randn({40, 24});
  const auto bias = torch::randn({40});
  const auto x = torch::randn({70, 24});
  if (amx_runs(AmxProduct::int8)) {
    const auto quantized = quantize_weight_int8(weight);
    REQUIRE(quantized.packed);
    auto unpacked = quantized;
    unpacked.packed = nullptr;  // the GEMM function
    CHECK(torch::equal(int8_linear(x, quantized, bias), int8_linear(x, unpacked, bias)));
  }
  if (amx_runs(AmxProduct::bf16)) {
    Linear layer(24, 40);
    torch::NoGradGuard no_grad;
    layer->use_path(LinearPath::bf16_weights, layer->convert_for(LinearPath::bf16_weights));
    const auto through_gemm = torch::nn::functional::linear(x.to(torch::kBFloat16), layer->weight, layer->bias);
    CHECK(torch::allclose(layer(x), through_gemm.to(torch::kFloat), 2e-2, 2e-2));  // the GEMM rounds to bf16
    const auto rows = torch::tensor({3, 0, 39}, torch::kLong);
    CHECK(torch::allclose(layer->output_rows(rows)->forward(x), layer(x).index_select(1, rows), 1e-5, 1e-5));
  }
}
