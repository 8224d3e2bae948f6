// What a model on CUDA computes with, decided from its device: the parts that need no GPU
// check the decisions for a c10::Device(kCUDA) value; the last case runs a Transformer on
// the GPU where there is one and reports itself skipped elsewhere.
#include "support/catch.h"
#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "nmt/base/device.h"
#include "nmt/decoding/search.h"
#include "nmt/models/compute_description.h"
#include "nmt/models/linear_path.h"
#include "nmt/models/precision.h"
#include "nmt/models/registry.h"
#include "nmt/models/transformer/transformer.h"
#include "support/small_transformer.h"
#include "support/test_device.h"

using namespace nmt;

namespace {

bool has_line_starting(const std::vector<std::string>& lines, const std::string& start) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) { return line.rfind(start, 0) == 0; });
}

}  // namespace

TEST_CASE("a Transformer decides dropout's kernel with attention's, when set up and when cast",
          "[transformer][device]") {
  torch::manual_seed(5);
  const auto built = build_model(test::small_transformer());
  auto* model = dynamic_cast<TransformerModel*>(built.get());
  REQUIRE(model != nullptr);
  CHECK(model->kernels() == KernelChoice::cpu_fp32);  // as built: fp32 on the CPU
  model->to(torch::kDouble);
  CHECK(model->kernels() == KernelChoice::torch_ops);
  // Training in fp64 takes LibTorch's dropout: the CPU kernel would refuse doubles.
  model->train();
  const auto source = torch::tensor({{5, 6, 7, 3}}, torch::kLong), target = torch::tensor({{2, 8, 9}}, torch::kLong);
  CHECK(model->forward(source, target).logits.scalar_type() == torch::kDouble);
  model->to(torch::kFloat);
  CHECK(model->kernels() == KernelChoice::cpu_fp32);
  const auto lines = describe_compute(*model);
  CHECK(has_line_starting(lines, "device: cpu"));
  CHECK(has_line_starting(lines, "dropout: " + describe_kernel_choice(KernelChoice::cpu_fp32)));
}

TEST_CASE("the Linear paths say what runs on CUDA, and the CPU-only ones refuse it", "[linear][device]") {
  const c10::Device cuda(c10::kCUDA, 0);
  const auto mixed = describe_linear_path(LinearPath::bf16_mixed, cuda);
  CHECK(mixed.find("cuBLAS") != std::string::npos);
  CHECK(mixed.find("oneDNN") == std::string::npos);
  CHECK(describe_linear_path(LinearPath::fp32_torch, cuda).find("cuda:0") != std::string::npos);
  CHECK(describe_linear_path(LinearPath::fp32_onednn, cuda).find("cannot run on cuda:0") != std::string::npos);
  CHECK(describe_linear_path(LinearPath::int8, cuda).find("cannot run") != std::string::npos);
  CHECK(describe_linear_path(LinearPath::fp32_onednn) == describe_linear_path(LinearPath::fp32_onednn, torch::kCPU));
  CHECK(inference_path(Precision::fp32, cuda) == LinearPath::fp32_torch);
}

TEST_CASE("train.precision auto is bf16 on a CUDA GPU that multiplies bf16, fp32 elsewhere", "[precision][device]") {
  const c10::Device cuda(c10::kCUDA);
  const auto expected = cuda_supports_bf16(cuda) ? Precision::bf16 : Precision::fp32;
  CHECK(resolve_training_precision("auto", cuda) == expected);
  if (cuda_supports_bf16(cuda)) {
    CHECK(training_path(resolve_training_precision("bf16", cuda), cuda) == LinearPath::bf16_mixed);
  } else {
    CHECK_FALSE(precision_supported(Precision::bf16, cuda));
    CHECK_THROWS_WITH(resolve_training_precision("bf16", cuda), HasSubstring("compute capability 8.0"));
  }
  CHECK_FALSE(cuda_supports_bf16(c10::Device(c10::kCPU)));
}

TEST_CASE("a Transformer moved to CUDA computes with LibTorch's operations and decodes there",
          "[transformer][device][cuda]") {
  NMT_REQUIRE_CUDA_OR_SKIP();
  torch::manual_seed(7);
  const auto built = build_model(test::small_transformer());
  auto* model = dynamic_cast<TransformerModel*>(built.get());
  REQUIRE(model != nullptr);
  const c10::Device cuda(c10::kCUDA);
  model->to(cuda);
  CHECK(model->kernels() == KernelChoice::torch_ops);
  CHECK(model->kernels() == KernelChoice::torch_ops);
  CHECK(model->device().is_cuda());
  const auto source = torch::tensor({{5, 6, 7, 3}}, torch::kLong).to(cuda);
  const auto target = torch::tensor({{2, 8, 9}}, torch::kLong).to(cuda);
  model->train();
  const auto logits = model->forward(source, target).logits;
  CHECK(logits.device().is_cuda());
  logits.sum().backward();
  model->eval();
  SearchOptions options;
  options.max_length_extra = 3;
  const auto hypotheses = greedy_search(*model, source, options);
  CHECK(hypotheses.size() == 1);
  CHECK(has_line_starting(describe_compute(*model), "device: cuda"));
}
