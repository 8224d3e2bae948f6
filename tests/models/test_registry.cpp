// The model-family registry: what it lists, how it refuses, and that each family checks
// its own config section.
#include "support/catch.h"

#include "nmt/base/error.h"
#include "nmt/models/registry.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/models/transformer/transformer_config.h"

using namespace nmt;

TEST_CASE("the registry lists the three families", "[registry]") {
  CHECK(model_family_names() == std::vector<std::string>{"gru", "attention", "transformer"});
  CHECK(model_family_list() == "gru, attention, transformer");
  for (const auto& family : model_families()) CHECK(!family.description.empty());
}

TEST_CASE("each family's settings are a registered config section", "[registry]") {
  for (const auto& family : model_families()) {
    INFO(family.name);
    CHECK(find_config_section(family.settings_section) != nullptr);
  }
}

TEST_CASE("an unknown family is refused with the registered names", "[registry]") {
  ModelConfig config;
  config.arch = "lstm";
  config.source_vocab = config.target_vocab = 10;
  CHECK_THROWS_WITH(build_model(config),
                    HasSubstring("\"lstm\" is not a model family (expected gru, attention, transformer)"));
  CHECK_THROWS_AS(validate_model_config(config), Error);
}

TEST_CASE("each family validates its own section", "[registry]") {
  ModelConfig config;
  config.arch = "attention";
  config.section<RnnConfig>().hidden_dim = 31;
  CHECK_THROWS_WITH(validate_model_config(config), HasSubstring("model.rnn.hidden_dim must be even"));
  config.section<RnnConfig>().hidden_dim = 32;
  config.section<RnnConfig>().attention = "cosine";
  CHECK_THROWS_WITH(validate_model_config(config), HasSubstring("model.rnn.attention must be"));
  config.arch = "gru";  // the GRU seq2seq has no attention: the setting is not its business
  CHECK_NOTHROW(validate_model_config(config));
  config.section<RnnConfig>().layers = 0;
  CHECK_THROWS_WITH(validate_model_config(config), HasSubstring("model.rnn"));

  config = ModelConfig{};
  config.section<TransformerConfig>().heads = 3;  // 256 is not a multiple of 3
  CHECK_THROWS_WITH(validate_model_config(config), HasSubstring("multiple of heads"));
  config.section<TransformerConfig>().heads = 4;
  config.section<TransformerConfig>().norm = "middle";
  CHECK_THROWS_WITH(validate_model_config(config), HasSubstring("norm must be"));
  config.section<TransformerConfig>().norm = "post";
}
