// Decoding over part of the target vocabulary (a shortlist's candidates): the Transformer
// scores a part's columns as its whole vocabulary does, on every inference path; a search
// over the whole vocabulary as a part is the plain search; outputs keep to the part.
#include "support/catch.h"
#include <torch/torch.h>

#include <algorithm>
#include <numeric>

#include "nmt/base/error.h"
#include "nmt/decoding/strategy.h"
#include "nmt/decoding/translator.h"
#include "nmt/decoding/vocabulary_part.h"
#include "nmt/models/onednn_gemm.h"
#include "nmt/models/onednn_packed_weight.h"
#include "nmt/models/registry.h"
#include "nmt/text/tokenizer.h"
#include "support/precision_here.h"
#include "support/small_transformer.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

std::vector<int64_t> all_ids(int64_t vocab) {
  std::vector<int64_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

bool holds(const VocabularyPart& part, const std::vector<int>& tokens) {
  return std::all_of(tokens.begin(), tokens.end(), [&](int token) { return part.column(token) >= 0; });
}

}  // namespace

TEST_CASE("a vocabulary part holds the special ids first and maps ids both ways", "[vocabulary_part]") {
  const VocabularyPart part({17, 9, 9, 25}, 30, torch::kCPU);
  CHECK(part.ids() == std::vector<int64_t>{0, 1, 2, 3, 9, 17, 25});
  CHECK(part.columns().equal(torch::tensor({0, 1, 2, 3, 9, 17, 25}, torch::kLong)));
  CHECK(part.column(SpecialIds::kEos) == SpecialIds::kEos);
  CHECK(part.column(17) == 5);
  CHECK(part.column(10) == -1);
  CHECK(part.column(30) == -1);
  CHECK_THROWS_WITH(VocabularyPart({30}, 30, torch::kCPU), HasSubstring("id 30, outside the vocabulary of 30"));
}

namespace {

// Steps `model` three times over the whole vocabulary and over `part` (score_only): the
// part's scores are only the part's columns, and equal the whole vocabulary's there.
void check_part_scores(Seq2SeqModel& model, const VocabularyPart& part, const torch::Tensor& source) {
  torch::NoGradGuard no_grad;
  const auto encoded = model.encode(source);
  auto whole = model.initial_state(encoded), restricted = model.initial_state(encoded);
  REQUIRE(model.score_only(*restricted, part.columns()));
  auto tokens = torch::full({source.size(0)}, SpecialIds::kBos, torch::kLong);
  for (int step = 0; step < 3; ++step) {
    const auto all = model.step(tokens, *whole).scores.values();
    const auto some = model.step(tokens, *restricted).scores.values();
    REQUIRE(some.sizes() == torch::IntArrayRef({source.size(0), part.size()}));  // only the part was computed
    const auto expected = all.index_select(1, part.columns());
    INFO("step " << step << ": largest difference " << (some - expected).abs().max().item<double>());
    CHECK(torch::allclose(some, expected, 1e-5, 1e-5));
    tokens = part.columns().index_select(0, some.argmax(1));
  }
}

}  // namespace

TEST_CASE("every family scores a part's columns as its whole vocabulary does", "[vocabulary_part]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 50);
  const auto source = torch::tensor({{10, 11, 12, 3}, {13, 14, 3, 0}}, torch::kLong);
  for (const auto& arch : model_family_names()) {
    DYNAMIC_SECTION(arch) {
      auto loaded = test::random_model(dir, arch, 5);
      const VocabularyPart part({4, 7, 8, 12, 20, 41}, loaded.config.model.target_vocab, torch::kCPU);
      check_part_scores(*loaded.model, part, source);
    }
  }
}

TEST_CASE("the Transformer scores a part's columns as its whole vocabulary does, on every inference path",
          "[vocabulary_part]") {
  std::vector<LinearPath> paths = {LinearPath::fp32_torch};
  if (onednn_fp32_gemm_enabled()) paths.push_back(LinearPath::fp32_onednn);
  if (onednn_packed_weights_enabled()) paths.push_back(LinearPath::fp32_packed);
  if (test::runs_here(Precision::bf16)) paths.push_back(LinearPath::bf16_weights);
  if (test::runs_here(Precision::int8)) paths.push_back(LinearPath::int8);
  for (const auto path : paths) {
    DYNAMIC_SECTION(linear_path_name(path)) {
      torch::manual_seed(5);
      auto model = build_model(test::small_transformer(/*tie_output=*/path != LinearPath::int8));
      model->eval();
      model->use_linear_path(path);
      const VocabularyPart part({4, 7, 8, 12, 20, 29}, 30, torch::kCPU);
      check_part_scores(*model, part, torch::tensor({{5, 6, 7, 3}, {8, 9, 3, 0}}, torch::kLong));
    }
  }
}

TEST_CASE("a search over the whole vocabulary as a part is the plain search, in every family", "[vocabulary_part]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 50);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  const auto source = torch::tensor({{10, 11, 12, 3}, {13, 14, 3, 0}}, torch::kLong);
  for (const auto& arch : model_family_names()) {
    for (const int beam : {1, 3}) {
      DYNAMIC_SECTION(arch << " beam " << beam) {
        auto loaded = test::random_model(dir, arch, 3);
        SearchOptions options;
        options.beam = beam;
        options.nbest = beam;
        options.max_length_extra = 5;
        const VocabularyPart part(all_ids(tokenizer.vocab_size()), tokenizer.vocab_size(), torch::kCPU);
        const auto plain = search(*loaded.model, source, options);
        const auto parted = search_vocabulary_part(*loaded.model, part, source, options);
        REQUIRE(parted.size() == plain.size());
        for (size_t b = 0; b < plain.size(); ++b) {
          REQUIRE(parted[b].size() == plain[b].size());
          for (size_t k = 0; k < plain[b].size(); ++k) {
            CHECK(parted[b][k].tokens == plain[b][k].tokens);
            CHECK(parted[b][k].score == Approx(plain[b][k].score).margin(1e-4));
          }
        }
      }
    }
  }
}

TEST_CASE("a search over a part writes only the part's tokens, and takes prefixes within it", "[vocabulary_part]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 50);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  const auto source = torch::tensor({{10, 11, 12, 3}, {13, 14, 3, 0}}, torch::kLong);
  const VocabularyPart part({6, 9, 15, 22, 40}, tokenizer.vocab_size(), torch::kCPU);
  for (const auto& arch : model_family_names()) {
    DYNAMIC_SECTION(arch) {
      auto loaded = test::random_model(dir, arch, 3);
      SearchOptions options;
      options.beam = 4;
      options.nbest = 2;
      options.max_length_extra = 6;
      SearchGuides guides;
      guides.prefixes = {{22, 22}, {}};
      const auto results = search_vocabulary_part(*loaded.model, part, source, options, guides);
      for (const auto& hypotheses : results)
        for (const auto& h : hypotheses) CHECK(holds(part, h.tokens));
      CHECK(std::vector<int>(results[0][0].tokens.begin(), results[0][0].tokens.begin() + 2) == std::vector<int>{22, 22});
      guides.prefixes = {{23}, {}};
      CHECK_THROWS_WITH(search_vocabulary_part(*loaded.model, part, source, options, guides),
                        HasSubstring("prefix token 23 is not in the part"));
    }
  }
}

TEST_CASE("a part made per sentence keeps each sentence's hypotheses to its own ids", "[vocabulary_part]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 50);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  const auto source = torch::tensor({{10, 11, 12, 3}, {13, 14, 3, 0}}, torch::kLong);
  const std::vector<std::vector<int64_t>> own = {{6, 9, 15}, {22, 40, 9}};
  const auto part = VocabularyPart::per_sentence(own, tokenizer.vocab_size(), torch::kCPU);
  CHECK(part.ids() == std::vector<int64_t>{0, 1, 2, 3, 6, 9, 15, 22, 40});
  REQUIRE(part.blocked().sizes() == torch::IntArrayRef({2, 9}));
  CHECK(part.blocked()[0].equal(torch::tensor({0, 0, 0, 0, 0, 0, 0, 1, 1}, torch::kBool)));
  for (const auto& arch : model_family_names()) {
    DYNAMIC_SECTION(arch) {
      auto loaded = test::random_model(dir, arch, 3);
      SearchOptions options;
      options.beam = 3;
      options.nbest = 3;
      options.max_length_extra = 6;
      const auto results = search_vocabulary_part(*loaded.model, part, source, options);
      for (size_t b = 0; b < 2; ++b) {
        const VocabularyPart mine(own[b], tokenizer.vocab_size(), torch::kCPU);
        for (const auto& h : results[b]) CHECK(holds(mine, h.tokens));
      }
      CHECK_THROWS_WITH(search_vocabulary_part(*loaded.model, part, source.narrow(0, 0, 1), options),
                        HasSubstring("a vocabulary part for 2 sentences, a source of 1 rows"));
    }
  }
}

TEST_CASE("a Translator with a shortlist decodes each line over its candidates, its prefix's tokens included",
          "[vocabulary_part][translator]") {
  ScratchDir dir;
  test::make_tiny_task(dir, 50);
  auto loaded = test::random_model(dir, "transformer", 3);
  const auto tokenizer = loaded.source_tokenizer;
  const int vocab = tokenizer.vocab_size();
  auto shortlist = std::make_shared<Shortlist>(vocab, vocab);
  shortlist->set_always({{5, 0.1f}, {6, 0.1f}});
  for (int s = 4; s < vocab; ++s) shortlist->set_translations(s, {{4 + (s * 7) % (vocab - 4), 0.5f}});
  TranslateOptions options;
  options.search.beam = 3;
  options.search.max_length_extra = 5;
  options.shortlist = shortlist;
  const Translator translator(set_up_for_inference(loaded, Precision::fp32, torch::kCPU), options);
  const std::vector<std::string> lines = {"seven hundred two", "one thousand"};
  const std::vector<std::string> prefixes = {"", "zwei"};
  const auto results = translator.translate(lines, prefixes);
  for (size_t i = 0; i < lines.size(); ++i) {
    INFO(lines[i]);
    const auto& t = results[i];
    REQUIRE(!t.hypotheses.empty());
    auto allowed = shortlist->candidates({&t.source_ids});
    allowed.insert(allowed.end(), t.prefix_ids.begin(), t.prefix_ids.end());
    const VocabularyPart part(allowed, vocab, torch::kCPU);
    for (const auto& h : t.hypotheses) CHECK(holds(part, h.tokens));
  }
  // Each line keeps to its own candidates: alone or beside the other line, the same result.
  options.batch_size = 1;
  const Translator one_by_one(set_up_for_inference(loaded, Precision::fp32, torch::kCPU), options);
  const auto alone = one_by_one.translate(lines, prefixes);
  for (size_t i = 0; i < lines.size(); ++i) {
    REQUIRE(alone[i].hypotheses.size() == results[i].hypotheses.size());
    for (size_t k = 0; k < alone[i].hypotheses.size(); ++k) {
      CHECK(alone[i].hypotheses[k].tokens == results[i].hypotheses[k].tokens);
      CHECK(alone[i].hypotheses[k].score == Approx(results[i].hypotheses[k].score).margin(1e-4));
    }
  }
  REQUIRE(!results[1].prefix_ids.empty());
  CHECK(std::equal(results[1].prefix_ids.begin(), results[1].prefix_ids.end(), results[1].hypotheses[0].tokens.begin()));

  options.shortlist = std::make_shared<Shortlist>(vocab + 1, vocab);
  CHECK_THROWS_WITH(Translator(set_up_for_inference(test::random_model(dir, "transformer", 3), Precision::fp32, torch::kCPU), options),
                    HasSubstring("the shortlist is for vocabularies of " + std::to_string(vocab + 1)));
}
