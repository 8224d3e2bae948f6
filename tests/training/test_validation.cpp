// Validation: every registered metric is scored, exact match against the references as
// the tokenizer gives them back (a perfect translation is not a miss for spacing or
// Unicode normalisation).
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/decoding/search.h"
#include "nmt/models/onednn_gemm.h"
#include "nmt/text/batching.h"
#include "nmt/training/validation.h"
#include "support/tiny_task.h"

using namespace nmt;

TEST_CASE("validation scores every metric, exact match against normalised references", "[validation]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  auto model = test::random_model(dir, "transformer", 3);
  // The references come from the path validation computes on.
  model.model->use_linear_path(inference_path(Precision::fp32, torch::kCPU));
  const auto corpus = read_parallel_corpus(dir.file("valid.en"), dir.file("valid.de"));
  ValidationSet data;
  data.encoded = encode_parallel_corpus(corpus, model.source_tokenizer, model.target_tokenizer, 0);
  // What the model's greedy search says, as raw "references" that differ only in spacing.
  SearchOptions greedy;
  greedy.beam = 1;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < data.encoded.source.size(); ++i) {
    const std::vector<const std::vector<int>*> row{&data.encoded.source[i]};
    const auto output = greedy_search(*model.model, pad_sequences(row, -1, SpecialIds::kEos), greedy);
    const auto text = model.target_tokenizer.decode(output[0].tokens);
    data.normalised_references.push_back(text);
    data.references.push_back("  " + text + "  ");  // the tokenizer drops these spaces
  }
  const auto result = validate(*model.model, data, model.target_tokenizer, 4096, 0, torch::kCPU);
  CHECK(result.scores.count("bleu") == 1);
  CHECK(result.scores.count("chrf") == 1);
  CHECK(result.scores.at("exact_match") == Approx(100.0));
  CHECK(result.metric("exact_match") == Approx(100.0));
  CHECK(result.metric("loss") == Approx(-result.loss));
  CHECK_THROWS(result.metric("ter"));
}

TEST_CASE("a validation that throws leaves the model in the mode it found", "[validation]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  auto model = test::random_model(dir, "transformer", 3);
  ValidationSet data;
  data.encoded.source = {{1, 2, 100000}};  // an id beyond the vocabulary: the embedding throws
  data.encoded.target = {{1, 2}};
  data.encoded.line_numbers = {1};
  data.references = {"a"};
  data.normalised_references = {"a"};
  model.model->train();
  const LinearPathScope training(*model.model, LinearPath::bf16_mixed);
  CHECK_THROWS(validate(*model.model, data, model.target_tokenizer, 4096, 0, torch::kCPU));
  CHECK(model.model->is_training());
  CHECK(model.model->linear_path() == LinearPath::bf16_mixed);
}

TEST_CASE("validation computes on the fp32 inference path and restores the training path", "[validation][precision]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  auto model = test::random_model(dir, "attention", 3);
  const auto corpus = read_parallel_corpus(dir.file("valid.en"), dir.file("valid.de"));
  ValidationSet data;
  data.encoded = encode_parallel_corpus(corpus, model.source_tokenizer, model.target_tokenizer, 0);
  data.references = data.normalised_references = std::vector<std::string>(data.encoded.source.size(), "a");
  const LinearPathScope training(*model.model, LinearPath::bf16_mixed);
  const auto before = onednn_linear_calls();
  validate(*model.model, data, model.target_tokenizer, 4096, 2, torch::kCPU);
  CHECK(model.model->linear_path() == LinearPath::bf16_mixed);
  if (onednn_fp32_gemm_enabled()) CHECK(onednn_linear_calls() > before);
}
