// oneDNN's fp32 sgemm (nmt/models/onednn_gemm.h) computes what torch's linear does, up to
// the order of the sums, at the shapes the decoder gives it: one row up to a batch of beams.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/base/cpu_features.h"
#include "nmt/models/int8_linear.h"
#include "nmt/models/onednn_gemm.h"
#include "nmt/models/linear.h"

using namespace nmt;

TEST_CASE("oneDNN linear equals torch linear at decoder shapes", "[precision][onednn]") {
  if (!onednn_fp32_gemm_enabled()) {
    WARN("not checked: oneDNN sgemm not found, or NMT_FP32_GEMM=blas");
    return;
  }
  torch::manual_seed(3);
  for (const int64_t rows : {1, 2, 3, 5, 17, 64, 320}) {
    for (const int64_t out : {1, 7, 256, 1000}) {
      const auto x = torch::randn({rows, 48});
      const auto weight = torch::randn({out, 48});
      const auto bias = torch::randn({out});
      const auto bias_before = bias.clone();
      const auto expected = torch::nn::functional::linear(x, weight, bias);
      INFO("rows " << rows << ", out " << out);
      CHECK(torch::allclose(onednn_linear(x, weight, bias), expected, 1e-4, 1e-4));
      CHECK(torch::equal(bias, bias_before));  // the output is a buffer of its own
      CHECK(torch::allclose(onednn_linear(x, weight, torch::Tensor()),
                            torch::nn::functional::linear(x, weight), 1e-4, 1e-4));
    }
  }
}

TEST_CASE("oneDNN linear reads strided inputs and an empty batch", "[precision][onednn]") {
  if (!onednn_fp32_gemm_enabled()) {
    WARN("not checked: oneDNN sgemm not found, or NMT_FP32_GEMM=blas");
    return;
  }
  const auto wide = torch::randn({6, 40});
  const auto x = wide.slice(1, 0, 40, 2);  // [6, 20], row stride 40
  const auto weight = torch::randn({20, 9}).t();  // [9, 20], transposed view
  CHECK(torch::allclose(onednn_linear(x, weight, torch::Tensor()),
                        torch::nn::functional::linear(x, weight), 1e-4, 1e-4));
  CHECK(onednn_linear(torch::randn({0, 20}), weight, torch::Tensor()).sizes() ==
        torch::IntArrayRef({0, 9}));
}

TEST_CASE("the fp32_onednn path goes through oneDNN, forward and backward, as fp32_torch does", "[precision][onednn]") {
  if (!onednn_fp32_gemm_enabled()) {
    WARN("not checked: oneDNN's sgemm not found");
    return;
  }
  torch::manual_seed(8);
  const auto values = torch::randn({5, 8});
  const auto weight_values = torch::randn({3, 8});
  const auto bias_values = torch::randn({3});
  const auto upstream = torch::randn({5, 3});
  struct Result {
    torch::Tensor y, grad_x, grad_weight, grad_bias;
  };
  auto run = [&](LinearPath path) {
    auto x = values.clone().requires_grad_(true);
    auto weight = weight_values.clone().requires_grad_(true);
    auto bias = bias_values.clone().requires_grad_(true);
    const auto y = fp32_weight_linear(path, x, weight, bias);
    (y * upstream).sum().backward();
    return Result{y.detach(), x.grad(), weight.grad(), bias.grad()};
  };
  const auto calls_before = onednn_linear_calls();
  const auto torch_result = run(LinearPath::fp32_torch);
  CHECK(onednn_linear_calls() == calls_before);  // LibTorch's products
  const auto onednn_result = run(LinearPath::fp32_onednn);
  CHECK(onednn_linear_calls() == calls_before + 3);  // the product and both gradients
  CHECK(torch::allclose(onednn_result.y, torch_result.y, 1e-5, 1e-5));
  CHECK(torch::allclose(onednn_result.grad_x, torch_result.grad_x, 1e-5, 1e-5));
  CHECK(torch::allclose(onednn_result.grad_weight, torch_result.grad_weight, 1e-5, 1e-5));
  CHECK(torch::allclose(onednn_result.grad_bias, torch_result.grad_bias, 1e-5, 1e-5));
  // Without a bias (the tied output projection), only the weight recording gradients.
  auto weight = weight_values.clone().requires_grad_(true);
  (fp32_weight_linear(LinearPath::fp32_onednn, values, weight, torch::Tensor()) * upstream).sum().backward();
  CHECK(torch::allclose(weight.grad(), torch_result.grad_weight, 1e-5, 1e-5));
  CHECK(onednn_linear_calls() == calls_before + 5);  // no input gradient asked for
  torch::NoGradGuard no_grad;  // inference: the product alone
  CHECK(!fp32_weight_linear(LinearPath::fp32_onednn, values, weight_values, torch::Tensor()).requires_grad());
  CHECK(onednn_linear_calls() == calls_before + 6);
}

TEST_CASE("onednn_matmul multiplies in each transposition", "[precision][onednn]") {
  if (!onednn_fp32_gemm_enabled()) return;
  const auto a = torch::randn({6, 4}), b = torch::randn({4, 7}), c = torch::randn({6, 7});
  CHECK(torch::allclose(onednn_matmul(a, false, b, false), torch::mm(a, b), 1e-5, 1e-5));
  CHECK(torch::allclose(onednn_matmul(a, true, c, false), torch::mm(a.t(), c), 1e-5, 1e-5));
  CHECK(torch::allclose(onednn_matmul(c, false, b, true), torch::mm(c, b.t()), 1e-5, 1e-5));
  CHECK(torch::allclose(onednn_matmul(b.t(), false, a, true), torch::mm(b.t(), a.t()), 1e-5, 1e-5));
  CHECK_THROWS_WITH(onednn_matmul(a, false, c, false), HasSubstring("inner sizes differ"));
}

TEST_CASE("fp32 training takes oneDNN where the CPU has AVX-512, the BLAS elsewhere", "[precision][onednn]") {
  INFO("CPU: " << describe_cpu_features());
  const bool onednn = cpu_features().avx512 && onednn_fp32_gemm_enabled();
  CHECK(training_path(Precision::fp32, torch::kCPU) == (onednn ? LinearPath::fp32_onednn : LinearPath::fp32_torch));
  CHECK(training_path(Precision::fp32, torch::Device("cuda")) == LinearPath::fp32_torch);
}

TEST_CASE("int8 linear is within quantization error of fp32", "[precision][int8]") {
  if (!onednn_int8_gemm_available()) {
    WARN("not checked: oneDNN's int8 GEMM not found");
    return;
  }
  INFO("CPU: " << describe_cpu_features());
  torch::manual_seed(4);
  for (const int64_t rows : {1, 5, 64}) {
    const auto x = torch::randn({rows, 256});
    const auto weight = torch::randn({300, 256}) * 0.05;
    const auto bias = torch::randn({300});
    const auto qweight = quantize_weight_int8(weight);
    REQUIRE(qweight.values.scalar_type() == torch::kChar);
    REQUIRE(qweight.scales.sizes() == torch::IntArrayRef({300}));
    const auto exact = torch::nn::functional::linear(x, weight, bias);
    const auto low = int8_linear(x, qweight, bias);
    INFO("rows " << rows);
    // Each product's relative error is about 2^-7 per operand (2^-6 for the weights
    // without VNNI); summed over 256 terms of random sign, the error grows like sqrt(256)
    // times one term's.
    const double error = (low - exact).abs().max().item<double>();
    const double scale = (exact - bias).abs().max().item<double>();
    CHECK(error > 0);
    CHECK(error < (cpu_features().avx512_vnni ? 0.03 : 0.05) * scale);
    // A zero row stays exactly the bias (its scale is 1, not 0 / 127).
    CHECK(torch::equal(int8_linear(torch::zeros({1, 256}), qweight, bias)[0], bias));
  }
}

// The integer sums themselves must be exact: the same quantized operands multiplied in
// fp32 give the same result up to float rounding. A GEMM whose intermediate sums saturate
// (AVX2's vpmaddubsw with full-range weights) is off by far more than rounding.
TEST_CASE("int8 linear sums the quantized products exactly", "[precision][int8]") {
  if (!onednn_int8_gemm_available()) {
    WARN("not checked: oneDNN's int8 GEMM not found");
    return;
  }
  INFO("CPU: " << describe_cpu_features());
  torch::manual_seed(5);
  // Heavy-tailed rows: many inputs near their row's maximum, the case that saturates.
  const auto x = torch::randn({64, 512}).sign() * (0.5 + torch::rand({64, 512}));
  const auto weight = torch::randn({200, 512}).sign() * (0.5 + torch::rand({200, 512}));
  const auto qweight = quantize_weight_int8(weight);
  const auto levels = qweight.values.abs().max().item<int64_t>();
  CHECK(levels == (cpu_features().avx512_vnni ? 127 : 63));
  const auto x_scales = x.abs().amax(1, true) / 127.0;
  const auto x_quantized = (x / x_scales).round() * x_scales;
  const auto dequantized = qweight.values.to(torch::kFloat) * qweight.scales.unsqueeze(1);
  const auto reference = torch::nn::functional::linear(x_quantized, dequantized);
  const auto low = int8_linear(x, qweight, torch::Tensor());
  const double error = (low - reference).abs().max().item<double>();
  const double scale = reference.abs().max().item<double>();
  CHECK(error < 1e-4 * scale);
}
