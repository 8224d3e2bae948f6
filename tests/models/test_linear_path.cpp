// The Linear path (nmt/models/linear_path.h, linear.h) is decided when a model is set up,
// held by every layer, and reported in one place (compute_description.h): a converted
// model's layers all run the path it was converted for, an int8 layer holds its quantized
// weight and scales and no fp32 weight, and a scoped path always comes back.
#include "support/catch.h"
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "nmt/base/cpu_features.h"
#include "nmt/kernels/kernel_table.h"
#include "nmt/models/compute_description.h"
#include "nmt/models/linear.h"
#include "nmt/models/registry.h"
#include "support/small_transformer.h"
#include "support/precision_here.h"

using namespace nmt;

namespace {

std::vector<LinearImpl*> linear_layers(Seq2SeqModel& model) {
  std::vector<LinearImpl*> layers;
  for (const auto& module : model.modules(/*include_self=*/false))
    if (auto* linear = dynamic_cast<LinearImpl*>(module.get())) layers.push_back(linear);
  return layers;
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  return std::find(lines.begin(), lines.end(), text) != lines.end();
}

}  // namespace

TEST_CASE("a model converted for inference runs one path in every layer and says so", "[precision][linear_path]") {
  const auto precision = GENERATE(Precision::fp32, Precision::bf16, Precision::int8);
  INFO(precision_name(precision));
  if (!test::runs_here(precision)) return;
  torch::manual_seed(1);
  auto model = build_model(test::small_transformer(GENERATE(true, false)));
  CHECK(model->linear_path() == LinearPath::fp32_torch);  // as built
  const auto path = inference_path(precision, torch::kCPU);
  model->use_linear_path(path);
  CHECK(model->linear_path() == path);
  const auto layers = linear_layers(*model);
  CHECK(layers.size() == 22);  // per encoder layer 2 self-attention + 2 feed-forward; per decoder layer 2 + 3 + 2
  for (const auto* layer : layers) CHECK(layer->path() == path);

  const auto lines = describe_compute(*model);
  const auto computes = describe_linear_path(path);
  CHECK(has_line(lines, "linear path: " + linear_path_name(path)));
  CHECK(has_line(lines, "attention projections: " + computes));
  CHECK(std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
    return line.rfind("feed-forward: " + computes, 0) == 0;
  }));
  CHECK(std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
    return line.rfind("output projection: " + computes, 0) == 0;
  }));
  CHECK(has_line(lines, "instruction set: " + describe_cpu_features()));
  for (const auto& kernel : describe_kernel_table()) CHECK(has_line(lines, "kernel " + kernel));
  CHECK(has_line(lines, "threads: " + std::to_string(at::get_num_threads()) + " (LibTorch intra-op)"));
  CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& line) { return line.rfind("libraries: LibTorch ", 0) == 0; }));
}

TEST_CASE("the path names its kernel and instruction set", "[precision][linear_path]") {
  CHECK(describe_linear_path(LinearPath::fp32_torch).find("LibTorch") != std::string::npos);
  CHECK(describe_linear_path(LinearPath::fp32_onednn).find("oneDNN sgemm") != std::string::npos);
  CHECK(describe_linear_path(LinearPath::fp32_packed).find("packed once, oneDNN matmul") != std::string::npos);
  // Where oneDNN runs the bf16 and int8 matmuls on AMX, the packed primitive's own name.
  const bool bf16_amx = onednn_amx_enabled(AmxProduct::bf16), int8_amx = onednn_amx_enabled(AmxProduct::int8);
  const auto packed = [](AmxProduct product) { return amx_probe(product) + " over weights packed once (AMX"; };
  CHECK_THAT(describe_linear_path(LinearPath::bf16_weights),
             HasSubstring(bf16_amx ? packed(AmxProduct::bf16) : "AVX512-BF16"));
  const auto int8 = describe_linear_path(LinearPath::int8);
  CHECK(int8.find(cpu_features().avx512_vnni ? "8-bit" : "7-bit") != std::string::npos);
  CHECK_THAT(int8, HasSubstring(int8_amx ? packed(AmxProduct::int8)
                                : cpu_features().avx512_vnni ? "AVX512-VNNI" : "without VNNI"));
  CHECK_THROWS_WITH(training_path(Precision::int8, torch::kCPU), HasSubstring("inference only"));
  CHECK(training_path(Precision::bf16, torch::kCPU) == LinearPath::bf16_mixed);
}

TEST_CASE("nmt::Linear starts from torch::nn::Linear's weights under its names", "[precision][linear_path]") {
  torch::manual_seed(7);
  const torch::nn::Linear reference(torch::nn::LinearOptions(6, 4));
  torch::manual_seed(7);
  const Linear layer(6, 4);
  CHECK(torch::equal(layer->weight, reference->weight));
  CHECK(torch::equal(layer->bias, reference->bias));
  const auto names = layer->named_parameters().keys();
  CHECK(names == std::vector<std::string>{"weight", "bias"});
  CHECK(Linear(6, 4, /*with_bias=*/false)->named_parameters().keys() == std::vector<std::string>{"weight"});
}

TEST_CASE("an int8 layer holds its quantized weight and scales, and no fp32 weight", "[precision][int8][linear_path]") {
  if (!test::runs_here(Precision::int8)) return;
  torch::manual_seed(2);
  Linear layer(16, 8);
  const auto fp32 = layer->weight.detach().clone();
  layer->use_path(LinearPath::int8, layer->convert_for(LinearPath::int8));
  CHECK(layer->path() == LinearPath::int8);
  CHECK_FALSE(layer->weight.defined());
  CHECK(layer->named_parameters().keys() == std::vector<std::string>{"bias"});
  const auto buffers = layer->named_buffers();
  REQUIRE(buffers.contains("weight_int8"));
  REQUIRE(buffers.contains("weight_scales"));
  const auto values = buffers["weight_int8"], scales = buffers["weight_scales"];
  CHECK(values.scalar_type() == torch::kChar);
  CHECK(values.sizes() == torch::IntArrayRef({8, 16}));
  CHECK(scales.sizes() == torch::IntArrayRef({8}));
  // The stored state is the weight: within half a step of each row's scale.
  const auto restored = values.to(torch::kFloat) * scales.unsqueeze(1);
  CHECK(((restored - fp32).abs() <= scales.unsqueeze(1) * 0.5001).all().item<bool>());
  CHECK_THROWS_WITH(layer->use_path(LinearPath::fp32_onednn, {}), HasSubstring("weights were rounded"));
}

TEST_CASE("an int8 Transformer keeps no fp32 Linear weight among its parameters", "[precision][int8][linear_path]") {
  if (!test::runs_here(Precision::int8)) return;
  const bool tied = GENERATE(true, false);
  INFO("tie_output " << tied);
  auto model = build_model(test::small_transformer(tied));
  model->use_linear_path(LinearPath::int8);
  for (const auto& parameter : model->named_parameters()) {
    INFO(parameter.key());
    const bool looked_up = parameter.key().find("embedding") != std::string::npos;
    const auto& key = parameter.key();
    const bool norm_or_bias = key.find("norm") != std::string::npos || key.substr(key.size() - 5) == ".bias";
    CHECK((looked_up || norm_or_bias));
    CHECK(parameter.value().scalar_type() == torch::kFloat);
  }
  int64_t quantized = 0;
  for (const auto& buffer : model->named_buffers())
    quantized += buffer.key().find("weight_int8") != std::string::npos;
  CHECK(quantized == 22);  // every registered Linear layer (the output projection is not registered)
}

TEST_CASE("a scoped path comes back however the scope ends", "[precision][linear_path]") {
  auto model = build_model(test::small_transformer(true));
  {
    const LinearPathScope training(*model, LinearPath::bf16_mixed);
    CHECK(model->linear_path() == LinearPath::bf16_mixed);
    for (const auto* layer : linear_layers(*model)) CHECK(layer->path() == LinearPath::bf16_mixed);
  }
  CHECK(model->linear_path() == LinearPath::fp32_torch);
  try {
    const LinearPathScope training(*model, LinearPath::bf16_mixed);
    throw std::runtime_error("a failed step");
  } catch (const std::runtime_error&) {
  }
  CHECK(model->linear_path() == LinearPath::fp32_torch);
  for (const auto* layer : linear_layers(*model)) CHECK(layer->path() == LinearPath::fp32_torch);
  CHECK_THROWS_WITH(LinearPathScope(*model, LinearPath::int8), HasSubstring("must read the fp32 weights"));
  CHECK(model->linear_path() == LinearPath::fp32_torch);
}
