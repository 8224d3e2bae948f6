// Ensembles: N copies of one model decode as that model does (tokens and scores), the
// combination is the mean of the members' probabilities, the state follows the searches'
// reorders, and models with other tokenizers are refused.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/decoding/search.h"
#include "nmt/models/ensemble.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

torch::Tensor tiny_source(const LoadedModel& model) {
  std::vector<std::vector<int64_t>> rows;
  for (const auto* line : {"seven hundred two", "forty-one thousand", "eight"}) {
    auto ids = model.source_tokenizer.encode(line);
    std::vector<int64_t> row(ids.begin(), ids.end());
    row.push_back(SpecialIds::kEos);
    row.resize(12, SpecialIds::kPad);
    rows.push_back(row);
  }
  auto source = torch::zeros({3, 12}, torch::kLong);
  for (int64_t r = 0; r < 3; ++r) source[r] = torch::tensor(rows[static_cast<size_t>(r)]);
  return source;
}

}  // namespace

TEST_CASE("an ensemble of copies of one model decodes as that model", "[ensemble]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  for (const auto& arch : test::families_with_attention()) {
    auto single = test::random_model(dir, arch, 5);
    std::vector<ModelPtr> copies;
    for (int i = 0; i < 3; ++i) copies.push_back(test::random_model(dir, arch, 5).model);
    EnsembleModel ensemble(copies);
    ensemble.eval();
    const auto source = tiny_source(single);
    SearchOptions options;
    options.beam = 4;
    options.nbest = 3;
    options.keep_attention = true;
    const auto expected = beam_search(*single.model, source, options);
    const auto got = beam_search(ensemble, source, options);
    for (size_t b = 0; b < 3; ++b)
      for (size_t k = 0; k < expected[b].size(); ++k) {
        INFO(arch << " sentence " << b << " hypothesis " << k);
        CHECK(got[b][k].tokens == expected[b][k].tokens);
        CHECK(got[b][k].score == Approx(expected[b][k].score).margin(1e-4));
        CHECK(torch::allclose(got[b][k].attention, expected[b][k].attention));
      }
  }
}

TEST_CASE("an ensemble step is the mean of its members' probabilities", "[ensemble]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto a = test::random_model(dir, "transformer", 1), b = test::random_model(dir, "transformer", 2);
  EnsembleModel ensemble({a.model, b.model});
  ensemble.eval();
  torch::NoGradGuard no_grad;
  const auto source = tiny_source(a);
  auto state = ensemble.initial_state(ensemble.encode(source));
  auto state_a = a.model->initial_state(a.model->encode(source));
  auto state_b = b.model->initial_state(b.model->encode(source));
  auto tokens = torch::full({3}, SpecialIds::kBos, torch::kLong);
  for (int step = 0; step < 3; ++step) {
    const auto mixed = ensemble.step(tokens, *state).scores.log_probs().exp();
    const auto expected = (a.model->step(tokens, *state_a).scores.log_probs().exp() + b.model->step(tokens, *state_b).scores.log_probs().exp()) / 2;
    CHECK(torch::allclose(mixed, expected, 1e-5, 1e-6));
    CHECK(torch::allclose(mixed.sum(1), torch::ones({3}), 1e-5, 1e-5));  // a distribution
    tokens = expected.argmax(1);
  }
  // The forward pass combines the same way.
  const auto target = torch::tensor({{SpecialIds::kBos, 5, 6}, {SpecialIds::kBos, 7, 8}, {SpecialIds::kBos, 9, 10}});
  const auto forward = ensemble.forward(source, target).logits.exp();
  const auto expected = (torch::softmax(a.model->forward(source, target).logits, -1) +
                         torch::softmax(b.model->forward(source, target).logits, -1)) / 2;
  CHECK(torch::allclose(forward, expected, 1e-5, 1e-6));
}

TEST_CASE("load_ensemble refuses models with other tokenizers", "[ensemble]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto a = test::random_model(dir, "transformer", 1);
  save_checkpoint(dir.file("a.pt"), a.config, *a.model, a.source_tokenizer, a.target_tokenizer);
  save_checkpoint(dir.file("b.pt"), a.config, *a.model, a.source_tokenizer, a.target_tokenizer);
  CHECK(load_ensemble({dir.file("a.pt")}).model.get() != nullptr);
  CHECK(dynamic_cast<EnsembleModel*>(load_ensemble({dir.file("a.pt"), dir.file("b.pt")}).model.get())->size() == 2);
  const auto other = test::other_tokenizer(dir);
  save_checkpoint(dir.file("c.pt"), a.config, *a.model, a.source_tokenizer, other);
  CHECK_THROWS_WITH(load_ensemble({dir.file("a.pt"), dir.file("c.pt")}),
                    HasSubstring("the target tokenizer of " + dir.file("c.pt") + " differs"));
}
