// Weights packed once for oneDNN's matmul (nmt/models/onednn_packed_weight.h): the products
// torch's linear computes, at a decoder's row counts; the path inference takes where the
// weights stay fixed, and not for validation's network, whose weights training updates.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/models/linear.h"
#include "nmt/models/onednn_gemm.h"
#include "nmt/models/onednn_packed_weight.h"

using namespace nmt;

TEST_CASE("a packed weight computes torch's linear at any row count", "[precision][onednn]") {
  if (!onednn_packed_weights_enabled()) {
    WARN("not checked: oneDNN's matmul not found, or NMT_FP32_GEMM chose another GEMM");
    return;
  }
  torch::manual_seed(4);
  for (const int64_t out : {1, 7, 256, 1000}) {
    const auto weight = torch::randn({out, 48});
    const auto bias = torch::randn({out});
    const OnednnPackedWeight with_bias(weight, bias), without_bias(weight, torch::Tensor());
    for (const int64_t rows : {0, 1, 2, 5, 16, 17, 64, 320, 1024, 1025}) {
      INFO("rows " << rows << ", out " << out);
      const auto x = torch::randn({rows, 48});
      const auto y = with_bias.apply(x);
      REQUIRE(y.sizes() == torch::IntArrayRef({rows, out}));
      CHECK(torch::allclose(y, torch::nn::functional::linear(x, weight, bias), 1e-4, 1e-4));
      CHECK(torch::allclose(without_bias.apply(x), torch::nn::functional::linear(x, weight), 1e-4, 1e-4));
    }
  }
}

TEST_CASE("a packed weight reads strided inputs and weights, in its window of rows", "[precision][onednn]") {
  if (!onednn_packed_weights_enabled()) {
    WARN("not checked: oneDNN's matmul not found, or NMT_FP32_GEMM chose another GEMM");
    return;
  }
  torch::manual_seed(6);
  const auto weight = torch::randn({20, 9}).t();  // [9, 20], a transposed view
  const OnednnPackedWeight packed(weight, torch::Tensor());
  const auto wide = torch::randn({40, 40});
  const auto x = wide.slice(1, 0, 40, 2);  // [40, 20], row stride 40
  CHECK(torch::allclose(packed.apply(x), torch::nn::functional::linear(x, weight), 1e-4, 1e-4));
  CHECK(torch::allclose(packed.apply(x.narrow(0, 0, 3)), torch::nn::functional::linear(x.narrow(0, 0, 3), weight), 1e-4, 1e-4));
  CHECK_FALSE(packed.packs_for(1));
  CHECK_FALSE(packed.packs_for(15));  // sgemm's own route for few rows of a narrow weight
  CHECK(packed.packs_for(16));
  CHECK(packed.packs_for(1024));
  CHECK_FALSE(packed.packs_for(1025));
  const OnednnPackedWeight vocabulary(torch::randn({5000, 8}), torch::Tensor());
  CHECK(vocabulary.packs_for(5));  // a wide weight: packing it again costs more than 5 rows' product
  CHECK_FALSE(vocabulary.packs_for(1));
  CHECK_THROWS_WITH(packed.apply(torch::randn({3, 21})), HasSubstring("expected fp32 [rows, 20]"));
  CHECK_THROWS_WITH(OnednnPackedWeight(torch::randn({5}), torch::Tensor()), HasSubstring("a 2-D fp32 tensor"));
  CHECK(!packed.implementation().empty());
}

TEST_CASE("fp32 inference packs the weights only where they stay fixed", "[precision][onednn][linear_path]") {
  if (!onednn_packed_weights_enabled()) {
    WARN("not checked: oneDNN's matmul not found, or NMT_FP32_GEMM chose another GEMM");
    return;
  }
  CHECK(inference_path(Precision::fp32, torch::kCPU) == LinearPath::fp32_packed);
  CHECK(inference_path(Precision::fp32, torch::kCPU, WeightUpdates::by_training) == LinearPath::fp32_onednn);
  CHECK_FALSE(converts_weights(LinearPath::fp32_packed));

  torch::manual_seed(2);
  Linear layer(12, 30);
  const auto x = torch::randn({17, 12});
  torch::NoGradGuard no_grad;
  const auto expected = layer(x);
  layer->use_path(LinearPath::fp32_packed, layer->convert_for(LinearPath::fp32_packed));
  CHECK(torch::allclose(layer(x), expected, 1e-5, 1e-5));
  const auto rows = torch::tensor({3, 0, 29}, torch::kLong);
  // A part of the rows (a shortlist's output projection) is packed for itself: the same
  // values up to the sums' order, which oneDNN may choose by the number of columns.
  CHECK(torch::allclose(layer->output_rows(rows)->forward(x), layer(x).index_select(1, rows), 1e-5, 1e-5));
  // Back on a path that reads the parameters: the packed copy goes, updates are seen.
  layer->use_path(LinearPath::fp32_onednn, {});
  layer->weight.mul_(2);
  CHECK(torch::allclose(layer(x), torch::nn::functional::linear(x, layer->weight, layer->bias), 1e-4, 1e-4));
  CHECK_THROWS_WITH(layer->use_path(LinearPath::fp32_packed, {}), HasSubstring("needs the packed weight"));
}

TEST_CASE("a packed layer refuses to record gradients", "[precision][onednn]") {
  if (!onednn_packed_weights_enabled()) {
    WARN("not checked: oneDNN's matmul not found, or NMT_FP32_GEMM chose another GEMM");
    return;
  }
  Linear layer(4, 3);
  layer->use_path(LinearPath::fp32_packed, layer->convert_for(LinearPath::fp32_packed));
  CHECK_THROWS_WITH(layer(torch::randn({2, 4})), HasSubstring("for inference"));
}
