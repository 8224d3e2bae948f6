// TranslationService: the same translations as nmt::Translator with the same options,
// and nmt-align's attention object for every hypothesis when asked.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/export/attention_export.h"
#include "nmt/serve/translation_service.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

TEST_CASE("the service answers what the Translator answers", "[serve]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  const std::vector<std::string> lines = {"seven hundred two", "eight", "forty-one thousand nine"};
  TranslateOptions base;
  base.search.max_length_extra = 4;
  serve::TranslationService service(set_up_for_inference(test::random_model(dir, "transformer", 3), Precision::fp32, torch::kCPU), base);
  serve::JobOptions options;
  options.search = base.search;  // the server's settings, as nmt-serve's flags give both
  options.search.beam = 3;
  options.search.nbest = 2;
  options.attention = true;
  std::vector<serve::AdmittedLine> admitted;
  std::vector<const serve::AdmittedLine*> admitted_lines;
  for (const auto& line : lines) admitted.push_back(service.admit(line, {}));
  for (const auto& line : admitted) admitted_lines.push_back(&line);
  CHECK(admitted[1].tokens == static_cast<int64_t>(std::any_cast<const Translation&>(admitted[1].prepared).source_ids.size()) + 1);
  const auto results = service.translate(lines, admitted_lines, options);
  Translator reference(set_up_for_inference(test::random_model(dir, "transformer", 3), Precision::fp32, torch::kCPU), service.translate_options(options));
  const auto expected = reference.translate(lines);
  REQUIRE(results.size() == lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    REQUIRE(results[i].hypotheses.size() == expected[i].hypotheses.size());
    for (size_t k = 0; k < expected[i].hypotheses.size(); ++k) {
      const auto& got = results[i].hypotheses[k];
      const auto& want = expected[i].hypotheses[k];
      CHECK(got.text == expected[i].texts[k]);
      CHECK(got.score == Approx(want.score).margin(1e-6));
      CHECK(got.tokens.size() == want.tokens.size() + (want.finished ? 1 : 0));
      auto loaded = reference.model();
      const ExportInput input{1, "translate", lines[i], expected[i].source_ids, &want, expected[i].texts[k]};
      const auto object = export_attention(loaded, input, AttentionExportOptions{});
      CHECK(got.attention["target"]["pieces"] == object["target"]["pieces"]);
      CHECK(got.attention["attention"].size() == object["attention"].size());
      CHECK(got.attention["layers"].size() == 2);
    }
  }
  const auto info = service.describe();
  CHECK(info["family"] == "transformer");
  CHECK(info["source_vocab"] == 60);
  CHECK(info["config"]["transformer"]["d_model"] == 32);
}
