// Checkpoints written by main before the layout change (tests/fixtures/main-896ef85: flat
// config, every family) still load, give the same log-probs and translations, and resume.
#include "support/catch.h"
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "nmt/decoding/search.h"
#include "nmt/decoding/translator.h"
#include "nmt/models/average.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/text/batching.h"
#include "nmt/training/trainer.h"
#include "support/test_util.h"

using namespace nmt;

namespace {

std::string fixture(const std::string& name) { return test::source_path("tests/fixtures/main-896ef85/" + name); }

nlohmann::json expected_results() {
  std::ifstream in(fixture("expected.json"));
  return nlohmann::json::parse(in);
}

std::string checkpoint_of(const std::string& family) {
  return fixture(family == "transformer" ? "transformer-last.pt" : family + ".pt");
}

}  // namespace

TEST_CASE("old checkpoints load into the sectioned config", "[checkpoint][compat]") {
  const auto transformer = load_model(checkpoint_of("transformer"));
  CHECK(transformer.config.model.arch == "transformer");
  CHECK(transformer.config.model.section<TransformerConfig>().d_model == 32);
  CHECK(transformer.config.model.section<TransformerConfig>().encoder_layers == 1);
  CHECK(transformer.config.model.section<TransformerConfig>().decoder_layers == 2);
  CHECK(transformer.config.model.section<TransformerConfig>().max_positions == 128);
  CHECK(transformer.model->max_positions() == 128);
  const auto gru = load_model(checkpoint_of("gru"));
  CHECK(gru.config.model.section<RnnConfig>().layers == 2);
  CHECK(gru.config.model.section<RnnConfig>().hidden_dim == 32);
  const auto attention = load_model(checkpoint_of("attention"));
  CHECK(attention.config.model.section<RnnConfig>().attention == "bahdanau");
}

TEST_CASE("old checkpoints score and translate as they did", "[checkpoint][compat]") {
  const auto expected = expected_results();
  for (const std::string family : {"gru", "attention", "transformer"}) {
    SECTION(family) {
      torch::NoGradGuard no_grad;
      auto loaded = load_model(checkpoint_of(family));
      TranslateOptions options;
      options.search.beam = 3;
      options.search.nbest = 2;
      Translator translator(set_up_for_inference(loaded, Precision::fp32, torch::kCPU), options);
      std::vector<std::string> sources;
      for (const auto& row : expected[family]) sources.push_back(row["source"]);
      const auto translations = translator.translate(sources);
      for (size_t line = 0; line < sources.size(); ++line) {
        const auto& hypotheses = expected[family][line]["hypotheses"];
        REQUIRE(translations[line].hypotheses.size() == hypotheses.size());
        const auto source_ids = loaded.source_tokenizer.encode(sources[line]);
        const std::vector<const std::vector<int>*> rows{&source_ids};
        const auto source = pad_sequences(rows, -1, SpecialIds::kEos);
        for (size_t k = 0; k < hypotheses.size(); ++k) {
          const auto ids = hypotheses[k]["ids"].get<std::vector<int>>();
          const auto old_log_probs = hypotheses[k]["token_log_probs"].get<std::vector<float>>();
          // Forced decoding of the old hypothesis: the same per-token log-probs.
          const auto forced = force_decode(*loaded.model, source, ids, false);
          const size_t scored = hypotheses[k]["finished"] ? ids.size() + 1 : ids.size();
          REQUIRE(forced.token_log_probs.size() >= scored);
          for (size_t t = 0; t < scored; ++t) CHECK(forced.token_log_probs[t] == Approx(old_log_probs[t]).margin(1e-4));
          // And today's search finds the same hypotheses with the same scores.
          CHECK(translations[line].hypotheses[k].tokens == ids);
          CHECK(translations[line].texts[k] == hypotheses[k]["text"].get<std::string>());
          CHECK(translations[line].hypotheses[k].score == Approx(hypotheses[k]["score"].get<double>()).margin(1e-4));
        }
      }
    }
  }
}

TEST_CASE("an old last.pt resumes training", "[checkpoint][compat][trainer]") {
  test::ScratchDir dir;
  std::filesystem::create_directories(dir.file("run"));
  std::filesystem::copy_file(checkpoint_of("transformer"), dir.file("run/last.pt"));
  TrainerOptions options;
  options.train_source = test::source_path("data/numbers/train.en");
  options.train_target = test::source_path("data/numbers/train.de");
  options.valid_source = test::source_path("data/numbers/valid.en");
  options.valid_target = test::source_path("data/numbers/valid.de");
  options.model_dir = dir.file("run");
  options.quiet = true;
  options.max_steps = 42;
  const auto result = train(options);
  CHECK(result.steps == 42);
  const auto resumed = load_model(dir.file("run/last.pt"));
  CHECK(resumed.config.model.section<TransformerConfig>().d_model == 32);
  CHECK(resumed.config.train.max_steps == 42);
}

TEST_CASE("an old checkpoint is known to carry no checksum, and re-saved sealed as it is", "[checkpoint][compat]") {
  test::ScratchDir dir;
  const auto old = load_model(checkpoint_of("gru"));
  REQUIRE(old.unsealed == std::vector<std::string>{checkpoint_of("gru")});
  const auto notes = checksum_notes(old);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes.front(), HasSubstring("carries no checksum"));
  write_average({checkpoint_of("gru")}, dir.file("sealed.pt"));
  const auto resaved = load_model(dir.file("sealed.pt"));
  CHECK(resaved.unsealed.empty());
  CHECK(checksum_notes(resaved).empty());
  const auto a = old.model->named_parameters(), b = resaved.model->named_parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(torch::equal(a[i].value(), b[i].value()));
  CHECK(load_model(checkpoint_of("gru")).unsealed.size() == 1);  // the old file, untouched, still loads
}

TEST_CASE("an old checkpoint with a non-finite weight is refused naming the tensor", "[checkpoint][compat]") {
  test::ScratchDir dir;
  std::ifstream in(checkpoint_of("gru"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The archive stores each tensor's floats as they are: find a weight's and damage one.
  const auto old = load_model(checkpoint_of("gru"));
  const auto parameters = old.model->named_parameters();
  const auto name = parameters[0].key();
  const auto weight = parameters[0].value();
  const auto first = weight.flatten().slice(0, 0, 8).contiguous();
  const std::string pattern(static_cast<const char*>(first.data_ptr()), 8 * sizeof(float));
  const auto at = bytes.find(pattern);
  REQUIRE(at != std::string::npos);
  bytes[at + 3] = static_cast<char>(0x7F), bytes[at + 2] = static_cast<char>(0xC0);  // a NaN's exponent and quiet bit
  std::ofstream(dir.file("damaged.pt"), std::ios::binary) << bytes;
  CHECK_THROWS_WITH(load_model(dir.file("damaged.pt")),
                    "weights in " + dir.file("damaged.pt") + ": " + name +
                        " holds 1 non-finite values (NaN or infinity): the file is damaged");
}
