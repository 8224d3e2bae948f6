// Reduced precision (nmt/models/precision.h, linear_path.h): bf16 inference converts the
// Transformer's Linear weights once and stays close to fp32; mixed-precision training
// (every family) keeps fp32 master weights and fp32 gradients; what is not implemented
// says so.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/models/registry.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/models/transformer/transformer.h"
#include "support/small_transformer.h"
#include "support/precision_here.h"

using namespace nmt;

namespace {

// The same small shape in any family (the RNN fields are ignored by the Transformer).
ModelConfig small_model(const std::string& arch) {
  auto config = test::small_transformer();
  config.arch = arch;
  config.section<RnnConfig>().embedding_dim = 8;
  config.section<RnnConfig>().hidden_dim = 8;
  return config;
}

const auto kPaddedSource = [] { return torch::tensor({{5, 6, 7, 8, 3}, {9, 10, 3, 0, 0}}, torch::kLong); };
const auto kInput = [] { return torch::tensor({{2, 11, 12, 13}, {2, 14, 15, 16}}, torch::kLong); };

std::vector<torch::Tensor> step_log_probs(Seq2SeqModel& model) {
  torch::NoGradGuard no_grad;
  auto state = model.initial_state(model.encode(kPaddedSource()));
  std::vector<torch::Tensor> steps;
  for (int64_t t = 0; t < 4; ++t) steps.push_back(model.step(kInput().select(1, t), *state).scores.log_probs());
  return steps;
}

}  // namespace

TEST_CASE("precision names parse and unknown ones are refused", "[precision]") {
  CHECK(parse_precision("fp32") == Precision::fp32);
  CHECK(parse_precision("bf16") == Precision::bf16);
  CHECK(parse_precision("int8") == Precision::int8);
  CHECK_THROWS_WITH(parse_precision("fp16"), HasSubstring("fp32, bf16 or int8"));
  CHECK(precision_name(Precision::bf16) == "bf16");
  CHECK(precision_name(Precision::int8) == "int8");
  CHECK_THROWS_WITH(resolve_training_precision("int8", torch::kCPU),
                    HasSubstring("inference only"));
}

TEST_CASE("bf16 inference converts the Transformer once and stays close to fp32", "[precision]") {
  if (!test::runs_here(Precision::bf16)) return;
  torch::manual_seed(11);
  auto model = build_model(test::small_transformer());
  model->eval();
  const auto exact = step_log_probs(*model);
  model->use_linear_path(LinearPath::fp32_torch);  // a no-op
  CHECK(step_log_probs(*model)[3].equal(exact[3]));

  model->use_linear_path(LinearPath::bf16_weights);
  model->use_linear_path(LinearPath::bf16_weights);  // idempotent
  for (const auto& parameter : model->named_parameters()) {
    const bool linear = parameter.key().find("embedding") == std::string::npos &&
                        parameter.key().find("norm") == std::string::npos;
    INFO(parameter.key());
    CHECK(parameter.value().scalar_type() == (linear ? torch::kBFloat16 : torch::kFloat));
  }
  const auto low = step_log_probs(*model);
  for (size_t t = 0; t < exact.size(); ++t) {
    CHECK(low[t].scalar_type() == torch::kFloat);
    const double diff = (low[t] - exact[t]).abs().max().item<double>();
    CHECK(diff > 0);     // it did compute in bf16
    CHECK(diff < 0.05);  // 8-bit mantissa, fp32 accumulation
  }
  CHECK_THROWS_WITH(model->use_linear_path(LinearPath::fp32_torch),
                    HasSubstring("converted to bf16_weights and cannot be converted to fp32_torch"));
}

TEST_CASE("int8 inference quantizes the Transformer once and stays near fp32", "[precision]") {
  if (!test::runs_here(Precision::int8)) return;
  torch::manual_seed(11);
  auto model = build_model(test::small_transformer());
  model->eval();
  const auto exact = step_log_probs(*model);
  model->use_linear_path(LinearPath::int8);
  model->use_linear_path(LinearPath::int8);  // idempotent
  const auto low = step_log_probs(*model);
  for (size_t t = 0; t < exact.size(); ++t) {
    CHECK(low[t].scalar_type() == torch::kFloat);
    const double diff = (low[t] - exact[t]).abs().max().item<double>();
    CHECK(diff > 0);    // it did compute in int8
    CHECK(diff < 0.1);  // 7 bits per weight row and per input row
  }
  CHECK_THROWS_WITH(model->use_linear_path(LinearPath::bf16_weights),
                    HasSubstring("converted to int8 and cannot be converted to bf16_weights"));
}

TEST_CASE("bf16 and int8 inference are refused for the RNN families", "[precision]") {
  auto model = build_model(small_model("attention"));
  model->use_linear_path(inference_path(Precision::fp32, torch::kCPU));
  CHECK_THROWS_WITH(model->use_linear_path(LinearPath::bf16_weights), HasSubstring("transformer family only"));
  CHECK_THROWS_WITH(model->use_linear_path(LinearPath::int8), HasSubstring("transformer family only"));
}

TEST_CASE("mixed-precision training keeps fp32 weights and gradients near fp32, in every family",
          "[precision]") {
  if (!test::runs_here(Precision::bf16)) return;
  const std::string arch = GENERATE(from_range(model_family_names()));
  INFO(arch);
  torch::manual_seed(12);
  auto model = build_model(small_model(arch));
  model->train();
  const auto target = torch::tensor({{11, 12, 13, 3}, {14, 15, 16, 3}}, torch::kLong);
  auto loss_of = [&](bool low) {
    const LinearPathScope mode(*model, low ? LinearPath::bf16_mixed : LinearPath::fp32_torch);
    auto logits = model->forward(kPaddedSource(), kInput()).logits;
    CHECK(logits.scalar_type() == torch::kFloat);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, 30}), target.reshape({-1}));
  };
  model->zero_grad();
  loss_of(false).backward();
  std::vector<torch::Tensor> exact;
  for (const auto& p : model->parameters()) exact.push_back(p.grad().clone());
  model->zero_grad();
  const auto low_loss = loss_of(true);
  low_loss.backward();
  std::vector<torch::Tensor> low, reference;
  size_t i = 0;
  for (const auto& p : model->parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(p.scalar_type() == torch::kFloat);
    CHECK(p.grad().scalar_type() == torch::kFloat);
    low.push_back(p.grad().flatten());
    reference.push_back(exact[i++].flatten());
  }
  // The whole gradient, as the optimiser sees it: close in direction and size.
  const auto g = torch::cat(low), r = torch::cat(reference);
  const double relative = ((g - r).norm() / r.norm()).item<double>();
  CHECK(relative > 0);
  CHECK(relative < 0.05);
  // The scope ends with its block: the next forward is fp32 again.
  model->zero_grad();
  loss_of(false).backward();
  CHECK(model->parameters()[0].grad().equal(exact[0]));
}
