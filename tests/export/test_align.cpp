// Attention export: the helpers, the JSON against docs/align.schema.json, and the
// matrices against the model's own step outputs.
#include "support/catch.h"
#include <torch/torch.h>

#include <fstream>

#include "support/json_schema.h"
#include "nmt/export/attention_export.h"
#include "nmt/text/batching.h"
#include "nmt/base/error.h"
#include "nmt/models/registry.h"
#include "nmt/decoding/translator.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

test::SchemaChecker schema() {
  std::ifstream in(test::source_path("docs/align.schema.json"));
  return test::SchemaChecker(nlohmann::json::parse(in));
}

void check_rows_are_distributions(const nlohmann::json& matrix, size_t rows, size_t columns) {
  REQUIRE(matrix.size() == rows);
  for (const auto& row : matrix) {
    REQUIRE(row.size() == columns);
    double sum = 0;
    for (double value : row) sum += value;
    CHECK(sum == Approx(1.0).margin(1e-5));
  }
}

nlohmann::json force_export(LoadedModel& model, const std::string& source, const std::string& target,
                            const AttentionExportOptions& options) {
  ExportInput input{1, "force", source, model.source_tokenizer.encode(source), nullptr, target};
  std::vector<const std::vector<int>*> row{&input.source_ids};
  const auto hypothesis = force_decode(*model.model, pad_sequences(row, -1, SpecialIds::kEos),
                                       model.target_tokenizer.encode(target), true);
  input.hypothesis = &hypothesis;
  return export_attention(model, input, options);
}

}  // namespace

TEST_CASE("pieces group into words at SentencePiece boundaries", "[align]") {
  const std::vector<std::string> pieces = {"\xe2\x96\x81" "sieben", "und", "vier", "zig", "\xe2\x96\x81" "x", "</s>"};
  CHECK(word_index_of_pieces(pieces) == std::vector<int64_t>{0, 0, 0, 0, 1, 2});
  CHECK(word_index_of_pieces({"<s>", "a", "\xe2\x96\x81" "b"}) == std::vector<int64_t>{0, 1, 2});
}

TEST_CASE("word aggregation sums over source pieces and averages over target pieces", "[align]") {
  // 3 target pieces (words 0,0,1) x 3 source pieces (words 0,1,1).
  const std::vector<std::vector<double>> m = {{0.5, 0.25, 0.25}, {0.1, 0.7, 0.2}, {0.0, 0.0, 1.0}};
  const auto w = aggregate_to_words(m, {0, 0, 1}, {0, 1, 1});
  REQUIRE(w.size() == 2);
  CHECK(w[0][0] == Approx(0.3));
  CHECK(w[0][1] == Approx(0.7));
  CHECK(w[1][0] == Approx(0.0));
  CHECK(w[1][1] == Approx(1.0));
}

TEST_CASE("hard alignment links each target word to its argmax source word, eos excluded", "[align]") {
  // Rows: two target words + eos; columns: two source words + eos.
  const std::vector<std::vector<double>> w = {{0.1, 0.2, 0.7}, {0.6, 0.3, 0.1}, {0, 0, 1}};
  CHECK(pharaoh_alignment(w, true) == "1-0 0-1");
  CHECK(pharaoh_alignment({}, true).empty());
  // A hypothesis cut at the length limit has no eos row: its last word keeps its link.
  const std::vector<std::vector<double>> cut = {{0.1, 0.2, 0.7}, {0.6, 0.3, 0.1}};
  CHECK(pharaoh_alignment(cut, false) == "1-0 0-1");
  CHECK(pharaoh_alignment(cut, true) == "1-0");
}

TEST_CASE("layer selection accepts all, last and an index, and rejects the rest", "[align]") {
  CHECK(select_layers("all", 3, "transformer") == std::vector<int64_t>{0, 1, 2});
  CHECK(select_layers("last", 3, "transformer") == std::vector<int64_t>{2});
  CHECK(select_layers("1", 3, "transformer") == std::vector<int64_t>{1});
  CHECK_THROWS_WITH(select_layers("3", 3, "transformer"), HasSubstring("0..2"));
  CHECK_THROWS_WITH(select_layers("x", 3, "transformer"), HasSubstring("--layers x"));
  CHECK_THROWS_WITH(select_layers("all", 0, "gru"), HasSubstring("gru model has no attention layers"));
}

TEST_CASE("exports conform to the schema, for every family and option", "[align]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  const auto checker = schema();
  for (const auto& arch : model_family_names()) {  // every registered family
    for (const bool word_level : {false, true}) {
      DYNAMIC_SECTION(arch << (word_level ? " words" : " pieces")) {
        auto model = test::random_model(dir, arch, 5);
        AttentionExportOptions options;
        options.word_level = word_level;
        options.self_attention = arch == "transformer";
        const auto object = force_export(model, "seven hundred two", "siebenhundertzwei", options);
        const auto problems = checker.check(object);
        for (const auto& problem : problems) FAIL_CHECK(problem);
        CHECK(object["has_attention"] == (arch != "gru"));
        if (arch == "gru") {
          CHECK_FALSE(object.contains("attention"));
          CHECK_THAT(object["note"].get<std::string>(), HasSubstring("no attention"));
          continue;
        }
        const auto& side = word_level ? std::string("words") : std::string("pieces");
        const size_t rows = object["target"][side].size(), columns = object["source"][side].size();
        check_rows_are_distributions(object["attention"], rows, columns);
        if (arch == "transformer") {
          REQUIRE(object["layers"].size() == 2);
          for (const auto& layer : object["layers"]) {
            check_rows_are_distributions(layer["mean"], rows, columns);
            REQUIRE(layer["heads"].size() == 2);
            for (const auto& head : layer["heads"]) check_rows_are_distributions(head, rows, columns);
          }
          const auto& self = object["self_attention"];
          const size_t decoder = self["decoder_input_pieces"].size();
          CHECK(self["encoder"].size() == 2);
          if (!word_level) {
            check_rows_are_distributions(self["encoder"][0]["mean"], columns, columns);
            check_rows_are_distributions(self["decoder"][1]["heads"][0], decoder, decoder);
          }
        }
      }
    }
  }
  // A skipped line is valid too.
  CHECK(checker.check(skipped_line(3, "translate", "invalid UTF-8 byte 0xff at byte 1")).empty());
}

TEST_CASE("forced decoding exports exactly the reference and the attention the decoder used", "[align]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  for (const auto& arch : test::families_with_attention()) {
    DYNAMIC_SECTION(arch) {
      auto model = test::random_model(dir, arch, 5);
      const std::string source = "forty-two thousand", target = "zweiundvierzigtausend";
      const auto object = force_export(model, source, target, {});
      const auto target_ids = model.target_tokenizer.encode(target);
      std::vector<std::string> expected;
      for (int id : target_ids) expected.push_back(model.target_tokenizer.piece(id));
      expected.push_back("</s>");
      CHECK(object["target"]["pieces"] == expected);

      // Re-run the decoder step by step and compare with the exported rows.
      torch::NoGradGuard no_grad;
      auto source_ids = model.source_tokenizer.encode(source);
      std::vector<const std::vector<int>*> row{&source_ids};
      auto state = model.model->initial_state(model.model->encode(pad_sequences(row, -1, SpecialIds::kEos)));
      int previous = SpecialIds::kBos;
      double log_prob = 0;
      for (size_t t = 0; t <= target_ids.size(); ++t) {
        const auto out = model.model->step(torch::tensor({previous}, torch::kInt64), *state);
        const int next = t < target_ids.size() ? target_ids[t] : SpecialIds::kEos;
        log_prob += out.scores.log_probs()[0][next].item<double>();
        const auto attention = out.attention[0];
        for (int64_t s = 0; s < attention.size(0); ++s)
          CHECK(object["attention"][t][s].get<double>() == Approx(attention[s].item<double>()).margin(2e-6));
        previous = next;
      }
      CHECK(object["log_prob"].get<double>() == Approx(log_prob).margin(1e-4));
    }
  }
}
