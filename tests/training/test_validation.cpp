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
#include "support/test_device.h"

using namespace nmt;

TEST_CASE("validation scores every metric, exact match against normalised references", "[validation]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  auto model = test::random_model(dir, "transformer", 3);
  // The references come from the path validation computes on.
  const InferenceModel inference(model, Precision::fp32, device);
  const auto corpus = read_parallel_corpus(dir.file("valid.en"), dir.file("valid.de"));
  ValidationSet data;
  data.encoded = encode_parallel_corpus(corpus, model.source_tokenizer, model.target_tokenizer, 0);
  // What the model's greedy search says, as raw "references" that differ only in spacing.
  SearchOptions greedy;
  greedy.beam = 1;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < data.encoded.source.size(); ++i) {
    const std::vector<const std::vector<int>*> row{&data.encoded.source[i]};
    const auto output = greedy_search(*model.model, pad_sequences(row, -1, SpecialIds::kEos).to(device), greedy);
    const auto text = model.target_tokenizer.decode(output[0].tokens);
    data.normalised_references.push_back(text);
    data.references.push_back("  " + text + "  ");  // the tokenizer drops these spaces
  }
  const auto result = validate(inference, data, 4096, 0);
  CHECK(result.scores.count("bleu") == 1);
  CHECK(result.scores.count("chrf") == 1);
  CHECK(result.scores.at("exact_match") == Approx(100.0));
  CHECK(result.metric("exact_match") == Approx(100.0));
  CHECK(result.metric("loss") == Approx(-result.loss));
  CHECK_THROWS(result.metric("ter"));
}

namespace {

// What the trainer validates: a network sharing the training model's weights.
InferenceModel sharing_weights(const LoadedModel& training) {
  LoadedModel twin{training.config, network_sharing_weights(training.config.model, *training.model),
                   training.source_tokenizer, training.target_tokenizer};
  return InferenceModel(std::move(twin), Precision::fp32, torch::kCPU, WeightUpdates::by_training);
}

}  // namespace

TEST_CASE("validation reads the training weights as they change, never the training model's path or mode",
          "[validation][precision]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  auto model = test::random_model(dir, "attention", 3);
  const auto corpus = read_parallel_corpus(dir.file("valid.en"), dir.file("valid.de"));
  ValidationSet data;
  data.encoded = encode_parallel_corpus(corpus, model.source_tokenizer, model.target_tokenizer, 0);
  data.references = data.normalised_references = std::vector<std::string>(data.encoded.source.size(), "a");
  model.model->train();
  const LinearPathScope training(*model.model, LinearPath::bf16_mixed);
  const auto validation = sharing_weights(model);
  const auto before = onednn_linear_calls();
  const double first = validate(validation, data, 4096, 2).loss;
  CHECK(model.model->is_training());
  CHECK(model.model->linear_path() == LinearPath::bf16_mixed);
  if (onednn_fp32_gemm_enabled()) CHECK(onednn_linear_calls() > before);
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model.model->parameters()) parameter.mul_(0.5);  // an update, in place
  }
  const double second = validate(validation, data, 4096, 2).loss;
  CHECK(second != first);
  CHECK(validate(sharing_weights(model), data, 4096, 2).loss == second);

  data.encoded.source = {{1, 2, 100000}};  // an id beyond the vocabulary: the embedding throws
  data.encoded.target = {{1, 2}};
  data.encoded.line_numbers = {1};
  data.references = data.normalised_references = {"a"};
  CHECK_THROWS(validate(validation, data, 4096, 0));
  CHECK(model.model->is_training());
  CHECK(model.model->linear_path() == LinearPath::bf16_mixed);
}

TEST_CASE("a network sharing weights draws nothing from the random generator", "[validation]") {
  test::ScratchDir dir;
  test::make_tiny_task(dir);
  auto model = test::random_model(dir, "transformer", 3);
  torch::manual_seed(5);
  const auto expected = torch::rand({4});
  torch::manual_seed(5);
  const auto twin = network_sharing_weights(model.config.model, *model.model);
  CHECK(torch::equal(torch::rand({4}), expected));
  CHECK(twin->parameters().front().data_ptr() == model.model->parameters().front().data_ptr());
}
