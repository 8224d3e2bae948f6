// The config: JSON round trip, the family sections, the old flat format, overrides.
#include "support/catch.h"

#include <cmath>
#include <fstream>
#include <vector>

#include "nmt/base/config.h"
#include "nmt/base/error.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/models/transformer/transformer_config.h"
#include "support/test_util.h"

using nmt::Config;
using nlohmann::json;

namespace {

// configs/transformer.json and configs/attention.json as main wrote them before the family
// sections (commit 896ef85): every model key directly under "model".
const json kFlatTransformer = json::parse(R"({
  "model": {"arch": "transformer", "d_model": 256, "heads": 4, "ffn_dim": 1024, "encoder_layers": 3,
            "decoder_layers": 3, "norm": "pre", "dropout": 0.1, "attention_dropout": 0.1,
            "share_embeddings": true, "tie_output": true, "max_positions": 512},
  "train": {"batch_tokens": 4096, "learning_rate": 0.001, "warmup_steps": 400}})");
const json kFlatAttention = json::parse(R"({
  "model": {"arch": "attention", "embedding_dim": 256, "hidden_dim": 512, "rnn_layers": 2,
            "attention": "general", "input_feeding": false, "dropout": 0.3}})");

}  // namespace

TEST_CASE("old flat configs load into the family sections", "[config]") {
  const auto transformer = nmt::config_from_json(kFlatTransformer, "old.json");
  CHECK(transformer.model.arch == "transformer");
  CHECK(transformer.model.section<TransformerConfig>().d_model == 256);
  CHECK(transformer.model.section<TransformerConfig>().ffn_dim == 1024);
  CHECK(transformer.model.section<TransformerConfig>().attention_dropout == 0.1);
  CHECK(transformer.model.section<TransformerConfig>().share_embeddings);
  CHECK(transformer.model.section<TransformerConfig>().max_positions == 512);
  CHECK(transformer.train.warmup_steps == 400);

  const auto attention = nmt::config_from_json(kFlatAttention, "old.json");
  CHECK(attention.model.section<RnnConfig>().embedding_dim == 256);
  CHECK(attention.model.section<RnnConfig>().layers == 2);
  CHECK(attention.model.section<RnnConfig>().attention == "general");
  CHECK(!attention.model.section<RnnConfig>().input_feeding);
  CHECK(attention.model.dropout == 0.3);

  // Saved in the new form, which loads to the same config.
  const auto saved = nmt::config_to_json(transformer);
  CHECK(saved["model"]["transformer"]["d_model"] == 256);
  CHECK(!saved["model"].contains("d_model"));
  CHECK(nmt::config_to_json(nmt::config_from_json(saved, "new.json")) == saved);
}

TEST_CASE("the presets in configs/ are in the sectioned form and load", "[config]") {
  for (const char* name : {"transformer", "attention", "gru", "numbers-attention", "numbers-gru", "numbers-transformer"}) {
    const auto path = nmt::test::source_path(std::string("configs/") + name + ".json");
    const auto config = nmt::load_config(path);
    CHECK_NOTHROW(config.validate());
    std::ifstream in(path);
    const auto model = json::parse(in)["model"];
    CHECK(!model.contains("d_model"));
    CHECK(!model.contains("hidden_dim"));
  }
}

TEST_CASE("a key given both in the old and the new place is an error", "[config]") {
  auto both = kFlatTransformer;
  both["model"]["transformer"] = {{"d_model", 128}};
  CHECK_THROWS_WITH(nmt::config_from_json(both, "x.json"),
                    HasSubstring("\"d_model\" and \"transformer.d_model\" both given"));
}

TEST_CASE("unknown keys and wrong types name the full key", "[config]") {
  CHECK_THROWS_WITH(nmt::config_from_json(json::parse(R"({"model": {"transformer": {"width": 3}}})"), "x.json"),
                    HasSubstring("x.json: model.transformer: unknown key \"width\""));
  CHECK_THROWS_WITH(nmt::config_from_json(json::parse(R"({"model": {"rnn": {"layers": "two"}}})"), "x.json"),
                    HasSubstring("model.rnn.layers: expected an integer"));
  CHECK_THROWS_WITH(nmt::config_from_json(json::parse(R"({"model": {"rnn": 3}})"), "x.json"),
                    HasSubstring("model.rnn: expected a JSON object"));
}

TEST_CASE("overrides take new and old key names", "[config]") {
  Config config;
  nmt::apply_override(config, "model.transformer.d_model=512");
  CHECK(config.model.section<TransformerConfig>().d_model == 512);
  nmt::apply_override(config, "model.d_model=128");  // the old flat name
  CHECK(config.model.section<TransformerConfig>().d_model == 128);
  nmt::apply_override(config, "model.rnn_layers=3");
  CHECK(config.model.section<RnnConfig>().layers == 3);
  nmt::apply_override(config, "model.arch=gru");  // bare words are strings
  CHECK(config.model.arch == "gru");
  nmt::apply_override(config, "train.learning_rate=0.01");
  CHECK(config.train.learning_rate == 0.01);
  CHECK_THROWS_WITH(nmt::apply_override(config, "model.transformer=3"), HasSubstring("is a section"));
  CHECK_THROWS_WITH(nmt::apply_override(config, "model.transformer.width=3"),
                    HasSubstring("unknown key model.transformer.width"));
  CHECK_THROWS_WITH(nmt::apply_override(config, "model.rnn.layers=x"), HasSubstring("expected an integer"));
  CHECK_THROWS_WITH(nmt::apply_override(config, "nodot=1"), HasSubstring("not of the form"));
  // A wrong-typed value with invalid UTF-8 is named in the error, not thrown on (found by fuzz_config).
  CHECK_THROWS_WITH(nmt::apply_override(config, "train.clip_norm=in.clip_no\x86m="),
                    HasSubstring("train.clip_norm: expected a number, got \"in.clip_no\xEF\xBF\xBDm=\""));
  CHECK(config.model.section<RnnConfig>().layers == 3);  // a failed override changes nothing
}

TEST_CASE("range checks name the field", "[config]") {
  Config config;
  config.train.batch_tokens = 0;
  CHECK_THROWS_WITH(config.validate(), HasSubstring("train.batch_tokens is 0; it must be >= 1"));
  config = Config{};
  config.model.dropout = 1.0;
  CHECK_THROWS_WITH(config.validate(), HasSubstring("model.dropout"));
  config = Config{};
  config.train.schedule = "noam";
  config.train.warmup_steps = 0;  // used to become a constant rate silently
  CHECK_THROWS_WITH(config.validate(), HasSubstring("warmup_steps must be > 0 with schedule noam"));
  config.train.schedule = "constant";
  CHECK_NOTHROW(config.validate());
}

TEST_CASE("every number field's bounds are checked, whatever the schedule", "[config]") {
  // {override, accepted}: each bound with a value just outside and one on it.
  const std::vector<std::pair<std::string, bool>> cases = {
      {"train.plateau_factor=0", false},      {"train.plateau_factor=1", false},
      {"train.plateau_factor=-1", false},     {"train.plateau_factor=2", false},
      {"train.plateau_factor=0.99", true},    {"train.plateau_patience=0", false},
      {"train.plateau_patience=1", true},     {"train.patience=-1", false},
      {"train.patience=0", true},             {"train.min_learning_rate=-1", false},
      {"train.min_learning_rate=0", true},    {"train.learning_rate=0", false},
      {"train.adam_beta1=1", false},          {"train.adam_beta1=0", true},
      {"train.adam_beta2=1.5", false},        {"train.adam_eps=0", false},
      {"train.weight_decay=-0.1", false},     {"train.clip_norm=-1", false},
      {"train.label_smoothing=1", false},     {"train.label_smoothing=0", true},
      {"train.accumulate=0", false},          {"train.max_length=0", false},
      {"train.warmup_steps=-1", false},       {"train.max_steps=-1", false},
      {"train.max_epochs=-1", false},         {"train.max_time_minutes=-0.5", false},
      {"train.valid_every=0", false},         {"train.log_every=0", false},
      {"train.keep_last=-1", false},          {"train.average_last=-1", false},
      {"train.save_every=-1", false},         {"train.valid_max_sentences=-1", false},
      {"train.seed=-1", false},               {"train.seed=0", true},
      {"model.dropout=-0.1", false},          {"model.transformer.attention_dropout=1", false},
      {"model.transformer.heads=0", false},   {"model.transformer.max_positions=0", false},
      {"model.rnn.layers=0", false},          {"model.rnn.hidden_dim=1", true},
  };
  for (const auto& [assignment, accepted] : cases) {
    Config config;
    config.train.schedule = "plateau";  // not what every case is about: a bound holds whatever the schedule
    if (assignment.rfind("train.plateau", 0) == 0) config.train.schedule = "noam";
    nmt::apply_override(config, assignment);
    INFO(assignment);
    if (accepted) {
      CHECK_NOTHROW(config.validate());
    } else {
      const auto field = assignment.substr(0, assignment.find('='));
      CHECK_THROWS_WITH(config.validate(), HasSubstring(field + " is ") && HasSubstring("it must be"));
    }
  }
  Config nan;
  nan.train.learning_rate = std::nan("");
  CHECK_THROWS_WITH(nan.validate(), HasSubstring("train.learning_rate is nan"));
}

namespace {
struct ProbeSettings {
  static constexpr const char* kSection = "probe";
  int64_t width = 3;
  std::string kind = "plain";
  template <typename V>
  void visit(V&& v) {
    v("width", width, nmt::kAtLeast1);
    v("kind", kind);
  }
  static constexpr nmt::OldFlatKey kOldFlatKeys[] = {{"probe_width", "width"}};
};
}  // namespace

TEST_CASE("a section registered from outside this layer is read, written, checked and upgraded", "[config]") {
  {
    const nmt::ConfigSectionRegistration probe(nmt::config_section_type<ProbeSettings>());
    // Written whole even when never set: a checkpoint describes its model whole.
    CHECK(nmt::config_to_json(Config{})["model"]["probe"] == json{{"width", 3}, {"kind", "plain"}});
    const auto config = nmt::config_from_json({{"model", {{"probe", {{"width", 5}}}}}}, "p.json");
    CHECK(config.model.section<ProbeSettings>().width == 5);
    CHECK(config.model.section<ProbeSettings>().kind == "plain");
    const auto old = nmt::config_from_json({{"model", {{"probe_width", 7}}}}, "old.json");
    CHECK(old.model.section<ProbeSettings>().width == 7);
    CHECK_THROWS_WITH(nmt::config_from_json({{"model", {{"probe", {{"kind", 1}}}}}}, "p.json"),
                      HasSubstring("p.json: model.probe.kind: expected a string, got 1"));
    Config zero;
    nmt::apply_override(zero, "model.probe_width=0");  // the old name, upgraded
    CHECK_THROWS_WITH(zero.validate(), HasSubstring("model.probe.width is 0; it must be >= 1"));
    CHECK_THROWS_WITH(nmt::ConfigSectionRegistration(nmt::config_section_type<ProbeSettings>()),
                      HasSubstring("model.probe is registered twice"));
  }
  // Gone with its registration: an unknown key again.
  CHECK_THROWS_WITH(nmt::config_from_json({{"model", {{"probe", json::object()}}}}, "p.json"),
                    HasSubstring("unknown key \"probe\""));
  auto hiding = nmt::config_section_type<ProbeSettings>();
  hiding.name = "dropout";
  CHECK_THROWS_WITH(nmt::ConfigSectionRegistration(hiding), HasSubstring("would hide the model's own key"));
}
