// A model family the library has never seen, defined in this file and registered here alone
// (register_model_family, through ScopedModelFamily), with its own settings (model.echo,
// registered through ConfigSectionRegistration): configs, overrides, training, checkpoints,
// greedy and beam translation and attention export take it through the registries and the
// model interface, with no other file knowing it. The family is a small attention GRU
// ("echo"): a GRU cell over the previous target token, dot-product attention over the
// source embeddings.
#include "support/catch.h"
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "nmt/base/config.h"
#include "nmt/decoding/translator.h"
#include "nmt/export/align_job.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/inference_model.h"
#include "nmt/models/registry.h"
#include "nmt/training/trainer.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

// model.echo
struct EchoConfig {
  static constexpr const char* kSection = "echo";
  int64_t dim = 16;  ///< embedding and state width

  template <typename V>
  void visit(V&& v) {
    v("dim", dim, kAtLeast1);
  }
};

struct EchoState : DecoderState {
  torch::Tensor memory;  // [B, S, D]
  torch::Tensor mask;    // [B, S] bool
  torch::Tensor hidden;  // [B, D]

  void reorder(const torch::Tensor& index) override { hidden = hidden.index_select(0, index); }
  void select(const torch::Tensor& index) override {
    memory = memory.index_select(0, index);
    mask = mask.index_select(0, index);
    hidden = hidden.index_select(0, index);
  }
  std::unique_ptr<DecoderState> clone() const override { return std::make_unique<EchoState>(*this); }
};

class EchoModel : public Seq2SeqModel {
 public:
  explicit EchoModel(const ModelConfig& config) : dim_(config.section<EchoConfig>().dim) {
    source_embedding_ = register_module("source_embedding", torch::nn::Embedding(config.source_vocab, dim_));
    target_embedding_ = register_module("target_embedding", torch::nn::Embedding(config.target_vocab, dim_));
    cell_ = register_module("cell", torch::nn::GRUCell(dim_, dim_));
    output_ = register_module("output", torch::nn::Linear(2 * dim_, config.target_vocab));
  }

  EncoderOutput encode(const torch::Tensor& source) override {
    EncoderOutput encoded;
    encoded.memory = source_embedding_(source);
    encoded.source_mask = padding_mask(source);
    return encoded;
  }

  DecoderStatePtr initial_state(const EncoderOutput& encoded) override {
    auto state = std::make_unique<EchoState>();
    state->memory = encoded.memory;
    state->mask = encoded.source_mask;
    const auto mask = encoded.source_mask.unsqueeze(2).to(encoded.memory.scalar_type());
    state->hidden = (encoded.memory * mask).sum(1) / mask.sum(1).clamp_min(1);
    return state;
  }

  StepOutput step(const torch::Tensor& previous_tokens, DecoderState& base) override {
    auto& state = state_as<EchoState>(base);
    torch::Tensor weights;
    const auto logits = advance(previous_tokens, state, weights);
    ++state.step;
    StepOutput out;
    out.scores = NextTokenScores::log_probs(torch::log_softmax(logits, -1));
    out.attention = weights;
    return out;
  }

  ForwardOutput forward(const torch::Tensor& source, const torch::Tensor& target_input) override {
    auto state = initial_state(encode(source));
    auto& echo = state_as<EchoState>(*state);
    std::vector<torch::Tensor> logits;
    torch::Tensor weights;
    for (int64_t t = 0; t < target_input.size(1); ++t) logits.push_back(advance(target_input.select(1, t), echo, weights));
    return {torch::stack(logits, 1)};
  }

 private:
  // One position: the cell over the previous token, attention over the source, the scores.
  torch::Tensor advance(const torch::Tensor& previous_tokens, EchoState& state, torch::Tensor& weights) {
    state.hidden = cell_(target_embedding_(previous_tokens), state.hidden);
    auto scores = torch::bmm(state.memory, state.hidden.unsqueeze(2)).squeeze(2);  // [B, S]
    scores = scores.masked_fill(state.mask.logical_not(), -1e9);
    weights = torch::softmax(scores, -1);
    const auto context = torch::bmm(weights.unsqueeze(1), state.memory).squeeze(1);
    return output_(torch::cat({state.hidden, context}, -1));
  }

  int64_t dim_;
  torch::nn::Embedding source_embedding_{nullptr}, target_embedding_{nullptr};
  torch::nn::GRUCell cell_{nullptr};
  torch::nn::Linear output_{nullptr};
};

ModelFamily echo_family() {
  return {"echo", "a test's attention GRU, defined outside the library", "echo",
          [](const ModelConfig& config) {
            if (config.section<EchoConfig>().dim % 2 != 0) throw Error("model.echo.dim must be even");
          },
          [](const ModelConfig& config) { return std::make_shared<EchoModel>(config); }};
}

}  // namespace

TEST_CASE("a family registered from outside the library trains, translates and exports attention",
          "[registry][trainer][translator]") {
  const auto library_families = model_family_names();
  const ConfigSectionRegistration echo_settings(config_section_type<EchoConfig>());
  const ScopedModelFamily registered(echo_family());
  auto with_echo = library_families;
  with_echo.push_back("echo");
  CHECK(model_family_names() == with_echo);
  CHECK_THROWS_WITH(register_model_family(echo_family()), HasSubstring("\"echo\" is registered already"));
  ScratchDir dir;
  test::make_tiny_task(dir);

  // Its settings, as configs and --set give them: read, range-checked, written.
  auto config = test::tiny_config("echo");
  apply_override(config, "model.echo.dim=12");
  CHECK(config.model.section<EchoConfig>().dim == 12);
  CHECK(config_to_json(config)["model"]["echo"] == nlohmann::json{{"dim", 12}});
  CHECK_THROWS_WITH(config_from_json({{"model", {{"echo", {{"width", 12}}}}}}, "echo.json"),
                    HasSubstring("echo.json: model.echo: unknown key \"width\""));
  auto zero = config;
  zero.model.section<EchoConfig>().dim = 0;
  CHECK_THROWS_WITH(zero.validate(), HasSubstring("model.echo.dim is 0; it must be >= 1"));
  auto odd = config;
  odd.model.section<EchoConfig>().dim = 11;
  CHECK_THROWS_WITH(validate_model_config(odd.model), HasSubstring("model.echo.dim must be even"));

  // Training: checkpoints that name the family, keep its settings and load through the registry.
  const auto result = train(test::tiny_trainer_options(dir, config, "run"));
  CHECK(result.steps == 10);
  const auto loaded = load_model(dir.file("run/last.pt"));
  CHECK(loaded.config.model.arch == "echo");
  CHECK(loaded.config.model.section<EchoConfig>().dim == 12);
  REQUIRE(dynamic_cast<EchoModel*>(loaded.model.get()) != nullptr);

  // Greedy and beam search through the Translator.
  const std::vector<std::string> lines = {"seven hundred two", "eight", "forty-two thousand nine hundred"};
  for (const int beam : {1, 3}) {
    TranslateOptions options;
    options.search.beam = beam;
    options.search.nbest = beam == 1 ? 1 : 2;
    options.search.max_length_extra = 4;
    const Translator translator(set_up_for_inference(load_model(dir.file("run/last.pt")), Precision::fp32, torch::kCPU),
                                options);
    for (const auto& translation : translator.translate(lines)) {
      INFO("beam " << beam);
      CHECK(translation.warning.empty());
      CHECK(static_cast<int>(translation.hypotheses.size()) == options.search.nbest);
    }
  }

  // Attention export (nmt-align's job): one matrix row per target token, each a distribution.
  TranslateOptions options;
  options.search.max_length_extra = 4;
  options.search.keep_attention = true;
  const Translator translator(set_up_for_inference(load_model(dir.file("run/last.pt")), Precision::fp32, torch::kCPU),
                              options);
  std::istringstream sources("seven hundred two\neight\n");
  std::vector<nlohmann::json> objects;
  run_align_job(translator, sources, "test", nullptr, "", AlignJobOptions{},
                [&](const std::string& line) { objects.push_back(nlohmann::json::parse(line)); },
                [](long, const std::string& problem) { FAIL(problem); });
  REQUIRE(objects.size() == 2);
  for (const auto& object : objects) {
    REQUIRE(object.contains("attention"));
    const auto& rows = object["attention"];
    REQUIRE(!rows.empty());
    for (const auto& row : rows) {
      double sum = 0;
      for (const auto& weight : row) sum += weight.get<double>();
      CHECK(sum == Approx(1.0).margin(1e-4));
    }
  }
}

TEST_CASE("a model family is refused without a name or its functions", "[registry]") {
  auto nameless = echo_family();
  nameless.name = "";
  CHECK_THROWS_WITH(register_model_family(nameless), HasSubstring("needs a name, a validate and a build function"));
  auto unbuildable = echo_family();
  unbuildable.build = nullptr;
  CHECK_THROWS_WITH(register_model_family(unbuildable), HasSubstring("needs a name"));
  auto unsettled = echo_family();  // model.echo is not registered here
  CHECK_THROWS_WITH(register_model_family(unsettled),
                    HasSubstring("names its settings model.echo, which is not a registered config section"));
  const auto names = model_family_names();
  CHECK(std::count(names.begin(), names.end(), "echo") == 0);
}
