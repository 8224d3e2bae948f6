// Translator: batching never changes a result, bad lines never shift the output.
#include "support/catch.h"
#include <torch/torch.h>

#include <atomic>
#include <thread>

#include "nmt/models/checkpoint.h"
#include "nmt/models/registry.h"
#include "nmt/decoding/translator.h"
#include "nmt/models/transformer/transformer_config.h"
#include "support/tiny_task.h"
#include "support/test_device.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

const std::vector<std::string> kLines = {
    "seven hundred two", "", "one thousand", "forty-two thousand nine hundred ninety-nine", "   ",
    "bad \xff byte", "eight", "three hundred thousand twelve"};

}  // namespace

TEST_CASE("translating a batch equals translating line by line", "[translator]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  for (const auto& arch : model_family_names()) {  // every registered family
    for (const int beam : {1, 3}) {
      DYNAMIC_SECTION(arch << " beam " << beam) {
        TranslateOptions options;
        options.search.beam = beam;
        options.search.nbest = beam;
        options.search.max_length_extra = 4;
        options.batch_tokens = 60;  // several batches
        Translator batched(set_up_for_inference(test::random_model(dir, arch, 11), Precision::fp32, device), options);
        options.batch_size = 1;
        Translator single(set_up_for_inference(test::random_model(dir, arch, 11), Precision::fp32, device), options);
        const auto all = batched.translate(kLines);
        REQUIRE(all.size() == kLines.size());
        for (size_t i = 0; i < kLines.size(); ++i) {
          INFO("line " << i);
          const auto one = single.translate({kLines[i]}).front();
          REQUIRE(one.hypotheses.size() == all[i].hypotheses.size());
          CHECK(one.texts == all[i].texts);
          for (size_t k = 0; k < one.hypotheses.size(); ++k) {
            CHECK(one.hypotheses[k].tokens == all[i].hypotheses[k].tokens);
            CHECK(one.hypotheses[k].score == Approx(all[i].hypotheses[k].score).margin(1e-4));
          }
        }
      }
    }
  }
}

TEST_CASE("one Translator translates on two threads at once as on one", "[translator]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  const std::vector<std::string> first = {"seven hundred two", "one thousand", "eight", "forty-two thousand"};
  const std::vector<std::string> second = {"three hundred thousand twelve", "nine", "", "ninety-nine", "sixty"};
  for (const auto& arch : model_family_names()) {
    DYNAMIC_SECTION(arch) {
      TranslateOptions options;
      options.search.beam = 3;
      options.search.nbest = 2;
      options.search.max_length_extra = 4;
      options.batch_tokens = 40;  // several batches per call
      const Translator translator(set_up_for_inference(test::random_model(dir, arch, 5), Precision::fp32, device), options);
      const auto expected_first = translator.translate(first), expected_second = translator.translate(second);
      // Two threads, let go at once, each translating its own lines over and over through
      // the one const Translator.
      const auto rounds = 30;
      std::vector<std::vector<Translation>> got_first, got_second;
      std::atomic<int> ready{0};
      const auto run = [&](const std::vector<std::string>& lines, std::vector<std::vector<Translation>>& got) {
        ready.fetch_add(1);
        while (ready.load() < 2) std::this_thread::yield();
        for (int i = 0; i < rounds; ++i) got.push_back(translator.translate(lines));
      };
      std::thread one(run, std::cref(first), std::ref(got_first));
      std::thread two(run, std::cref(second), std::ref(got_second));
      one.join();
      two.join();
      const auto same = [](const std::vector<Translation>& a, const std::vector<Translation>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
          if (a[i].texts != b[i].texts || a[i].hypotheses.size() != b[i].hypotheses.size()) return false;
          for (size_t k = 0; k < a[i].hypotheses.size(); ++k)
            if (a[i].hypotheses[k].tokens != b[i].hypotheses[k].tokens ||
                std::abs(a[i].hypotheses[k].score - b[i].hypotheses[k].score) > 1e-5)
              return false;
        }
        return true;
      };
      for (int i = 0; i < rounds; ++i) {
        INFO("round " << i);
        CHECK(same(got_first[static_cast<size_t>(i)], expected_first));
        CHECK(same(got_second[static_cast<size_t>(i)], expected_second));
      }
    }
  }
}

TEST_CASE("samples follow line numbers, not how the input was cut into calls", "[translator][sampling]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  TranslateOptions options;
  options.search.strategy = "sample";
  options.search.nbest = 3;
  options.search.sampling.seed = 4;
  options.search.max_length_extra = 4;
  const Translator translator(set_up_for_inference(test::random_model(dir, "transformer", 5), Precision::fp32, torch::kCPU), options);
  const std::vector<std::string> lines = {"seven hundred two", "one thousand", "eight", "forty-two thousand"};
  const auto whole = translator.translate(lines);
  const std::vector<std::string> tail(lines.begin() + 2, lines.end());
  const auto cut = translator.translate(tail, std::vector<std::string>(tail.size()), {}, 2);
  const auto renumbered = translator.translate(tail);
  for (size_t i = 0; i < tail.size(); ++i) CHECK(cut[i].texts == whole[i + 2].texts);
  // Numbered from 0 instead, the same lines draw other samples (some of 2 x 3 differ).
  bool any_differs = false;
  for (size_t i = 0; i < tail.size(); ++i) any_differs = any_differs || renumbered[i].texts != whole[i + 2].texts;
  CHECK(any_differs);
}

TEST_CASE("empty and invalid lines keep their place", "[translator]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  TranslateOptions options;
  options.search.beam = 2;
  options.search.max_length_extra = 3;
  Translator translator(set_up_for_inference(test::random_model(dir, "attention", 11), Precision::fp32, device), options);
  const auto results = translator.translate(kLines);
  REQUIRE(results.size() == kLines.size());
  CHECK(results[1].hypotheses.empty());
  CHECK(results[1].warning.empty());
  CHECK(results[4].hypotheses.empty());
  CHECK(results[5].skipped);
  CHECK_THAT(results[5].warning, HasSubstring("invalid UTF-8"));
  CHECK(results[5].best_text().empty());
  for (size_t i : {0, 2, 3, 6, 7}) CHECK(results[i].hypotheses.size() == 1);
}

TEST_CASE("over-long inputs are truncated and flagged", "[translator]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  TranslateOptions options;
  options.search.beam = 1;
  options.search.max_length_extra = 2;
  options.max_input_tokens = 5;
  Translator translator(set_up_for_inference(test::random_model(dir, "transformer", 11), Precision::fp32, device), options);
  const auto result = translator.translate({"seven hundred seventy-seven thousand seven hundred seventy-seven"}).front();
  CHECK(result.truncated);
  CHECK(result.source_ids.size() == 5);
  CHECK_THAT(result.warning, HasSubstring("truncated to 5"));
  CHECK(result.hypotheses.size() == 1);
}

TEST_CASE("the Transformer's input limit respects its positional table", "[translator]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  auto model = test::random_model(dir, "transformer", 11);
  model.config.model.section<TransformerConfig>().max_positions = 40;
  model.model = build_model(model.config.model);  // the limit is the model's own table
  TranslateOptions options;  // ratio 2, extra 10: 2L + 10 + 2 <= 40 gives L = 14
  CHECK(Translator(set_up_for_inference(model, Precision::fp32, device), options).input_token_limit() == 14);
}

TEST_CASE("a line whose prefix or constraints the model cannot take is skipped alone", "[translator]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  auto model = test::random_model(dir, "transformer", 11);
  model.config.model.section<TransformerConfig>().max_positions = 40;
  model.model = build_model(model.config.model);
  TranslateOptions options;
  options.search.beam = 2;
  options.search.max_length_extra = 3;
  Translator translator(set_up_for_inference(model, Precision::fp32, device), options);
  std::string long_prefix;
  for (int i = 0; i < 60; ++i) long_prefix += "seven ";
  const std::vector<std::string> too_many(SearchGuides::kMaxConstraints + 1, "eight");
  const std::vector<std::string> lines = {"seven", "eight", "one thousand", "twelve"};
  const auto results = translator.translate(lines, {"", long_prefix, "", "one"}, {{}, {}, too_many, {"two"}});
  REQUIRE(results.size() == 4);
  CHECK(results[1].skipped);
  CHECK_THAT(results[1].warning, HasSubstring("positions take at most 38"));
  CHECK(results[1].hypotheses.empty());
  CHECK(results[2].skipped);
  CHECK_THAT(results[2].warning, HasSubstring("65 constraints: at most 64"));
  CHECK(results[0].hypotheses.size() == 1);
  CHECK(results[3].hypotheses.size() == 1);
  CHECK(guide_problem(*model.model, 38, SearchGuides::kMaxConstraints).empty());
}
