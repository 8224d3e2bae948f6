// The trainer's optimizer: Adam in one pass per parameter, with the clipping factor applied
// inside it, against LibTorch's clip_grad_norm_ + torch::optim::Adam; and its state against
// LibTorch's in both directions (checkpoints written by either resume with the other).
#include "support/catch.h"
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <vector>

#include "nmt/base/error.h"
#include "nmt/training/fused_adam.h"
#include "support/tensor_diff.h"

using nmt::FusedAdam;
using nmt::test::max_diff;

namespace {

using AdamParameters = std::vector<torch::Tensor>;

// Sizes above and below the parallel loop's grain (16k), and a single element.
AdamParameters make_parameters(torch::Dtype dtype = torch::kFloat) {
  torch::manual_seed(11);
  AdamParameters parameters;
  for (const auto& sizes : std::vector<std::vector<int64_t>>{{300, 700}, {1000}, {5, 3}, {1}})
    parameters.push_back(torch::randn(sizes, dtype).requires_grad_());
  return parameters;
}

AdamParameters copies(const AdamParameters& parameters) {
  AdamParameters out;
  for (const auto& p : parameters) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

// The same gradients for both sides at each step (the seed), one of them not contiguous.
void set_gradients(AdamParameters& parameters, int step) {
  torch::manual_seed(100 + step);
  for (auto& p : parameters) {
    const auto values = torch::randn(p.sizes().vec(), p.options().requires_grad(false)) * 3;
    if (p.dim() == 2) {  // column-major storage, not a view (zero_grad detaches gradients in place)
      p.mutable_grad() = torch::empty_strided(p.sizes(), {1, p.size(0)}, values.options()).copy_(values);
      REQUIRE_FALSE(p.grad().is_contiguous());
    } else {
      p.mutable_grad() = values;
    }
  }
}

torch::optim::AdamOptions adam_options(double weight_decay) {
  return torch::optim::AdamOptions(1e-2).betas({0.9, 0.98}).eps(1e-9).weight_decay(weight_decay);
}

void libtorch_update(torch::optim::Adam& adam, AdamParameters& parameters, double max_norm) {
  torch::nn::utils::clip_grad_norm_(parameters, max_norm);
  adam.step();
  adam.zero_grad();
}

void fused_update(FusedAdam& adam, AdamParameters& parameters, double max_norm) {
  adam.update(nmt::clipping_factor(parameters, max_norm));
  nmt::release_gradients(parameters);
}

// Adam's moments of each parameter, in parameter order.
AdamParameters moments(torch::optim::Optimizer& optimizer, const AdamParameters& parameters) {
  AdamParameters out;
  for (const auto& p : parameters) {
    auto& state = static_cast<torch::optim::AdamParamState&>(
        *optimizer.state().at(nmt::optimizer_state_key(p)));
    out.push_back(state.exp_avg());
    out.push_back(state.exp_avg_sq());
  }
  return out;
}

std::string saved(const torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);
  return bytes.str();
}

void load(torch::optim::Optimizer& optimizer, const std::string& bytes) {
  std::istringstream stream(bytes);
  torch::serialize::InputArchive archive;
  archive.load_from(stream);
  optimizer.load(archive);
}

}  // namespace

TEST_CASE("one-pass Adam with the clipping factor matches clip_grad_norm_ and torch::optim::Adam", "[fused_adam]") {
  for (double weight_decay : {0.0, 0.01}) {
    for (double max_norm : {1.0, 1e6}) {  // clipping every step; never clipping
      INFO("weight decay " << weight_decay << ", max norm " << max_norm);
      auto theirs = make_parameters();
      auto ours = copies(theirs);
      torch::optim::Adam reference(theirs, adam_options(weight_decay));
      FusedAdam fused(ours, adam_options(weight_decay));
      REQUIRE(fused.one_pass());
      for (int step = 0; step < 5; ++step) {
        set_gradients(theirs, step);
        set_gradients(ours, step);
        libtorch_update(reference, theirs, max_norm);
        fused_update(fused, ours, max_norm);
      }
      CHECK(max_diff(ours[0], make_parameters()[0]) > 1e-3);  // the parameters did move
      CHECK(max_diff(ours, theirs) < 2e-6);
      CHECK(max_diff(moments(fused, ours), moments(reference, theirs)) < 1e-5);
      for (const auto& p : ours) CHECK_FALSE(p.grad().defined());
    }
  }
}

TEST_CASE("the clipping factor is the one clip_grad_norm_ multiplies by", "[fused_adam]") {
  auto parameters = make_parameters();
  set_gradients(parameters, 0);
  const auto before = parameters[1].grad().clone();
  const double factor = nmt::clipping_factor(parameters, 2.5);
  CHECK(parameters[1].grad().equal(before));  // it only reads them
  torch::nn::utils::clip_grad_norm_(parameters, 2.5);
  CHECK(max_diff(parameters[1].grad(), before * factor) < 1e-8);  // float rounding of its coefficient
  CHECK(factor < 0.01);
  CHECK(nmt::clipping_factor(parameters, 1e9) == 1.0);
}

TEST_CASE("Adam state written by either optimizer resumes with the other", "[fused_adam]") {
  const auto options = adam_options(0.0);
  for (bool fused_first : {true, false}) {
    INFO((fused_first ? "FusedAdam, then torch::optim::Adam" : "torch::optim::Adam, then FusedAdam"));
    auto first = make_parameters();
    std::unique_ptr<torch::optim::Adam> writer;
    if (fused_first) writer = std::make_unique<FusedAdam>(first, options);
    else writer = std::make_unique<torch::optim::Adam>(first, options);
    for (int step = 0; step < 3; ++step) {
      set_gradients(first, step);
      libtorch_update(*writer, first, 1.0);  // Optimizer::step: FusedAdam's update(1)
    }
    // The writer goes on; a reader of the other kind loads its state into copies of the parameters.
    auto second = copies(first);
    std::unique_ptr<torch::optim::Adam> reader;
    if (fused_first) reader = std::make_unique<torch::optim::Adam>(second, options);
    else reader = std::make_unique<FusedAdam>(second, options);
    load(*reader, saved(*writer));
    for (int step = 3; step < 5; ++step) {
      set_gradients(first, step);
      set_gradients(second, step);
      libtorch_update(*writer, first, 1.0);
      libtorch_update(*reader, second, 1.0);
    }
    // Moments started afresh (state not found) would make the reader's steps several times larger.
    CHECK(max_diff(first, second) < 2e-6);
    CHECK(max_diff(moments(*writer, first), moments(*reader, second)) < 1e-5);
  }
}

namespace {

// An optimizer state as LibTorch's Adam::save lays it out, its parameters saved under
// `keys`: LibTorch 1.x writes hex addresses ("0x55d0..."), 2.x decimal ones.
std::string adam_state_with_keys(const std::vector<std::string>& keys, const AdamParameters& moments) {
  torch::serialize::OutputArchive archive;
  archive.write("pytorch_version", c10::IValue(std::string("1.5.0")));
  torch::serialize::OutputArchive state(archive.compilation_unit()), groups(archive.compilation_unit()),
      group(archive.compilation_unit()), options(archive.compilation_unit());
  for (size_t i = 0; i < keys.size(); ++i) {
    torch::optim::AdamParamState one;
    one.step(7);
    one.exp_avg(moments[2 * i]);
    one.exp_avg_sq(moments[2 * i + 1]);
    torch::serialize::OutputArchive one_archive(archive.compilation_unit());
    one.serialize(one_archive);
    state.write(keys[i], one_archive);
  }
  group.write("params/size", torch::tensor(static_cast<int64_t>(keys.size())));
  for (size_t i = 0; i < keys.size(); ++i) group.write("params/" + std::to_string(i), c10::IValue(keys[i]));
  adam_options(0.5).serialize(options);
  group.write("options", options);
  groups.write("param_groups/size", torch::tensor(int64_t{1}));
  groups.write("param_groups/0", group);
  archive.write("state", state);
  archive.write("param_groups", groups);
  std::ostringstream bytes;
  archive.save_to(bytes);
  return bytes.str();
}

}  // namespace

TEST_CASE("Adam state loads onto its parameters whichever LibTorch wrote its keys", "[fused_adam][compat]") {
  auto parameters = make_parameters();
  AdamParameters saved_moments;
  for (const auto& p : parameters) {
    saved_moments.push_back(torch::randn_like(p).detach());
    saved_moments.push_back(torch::rand_like(p).detach());
  }
  // Hex keys are the case LibTorch 2.x's own load gets wrong: it reads them as decimal
  // numbers, so every one becomes 0 and the moments land on the wrong parameters.
  const std::vector<std::vector<std::string>> key_sets{{"0x55d0a1b2c3d0", "0x55d0a1b2c4e0", "0x55d0a1b2c5f0", "0x55d0a1b2c700"},
                                                       {"94083040928720", "94083040928992", "94083040929264", "94083040929536"}};
  for (const auto& keys : key_sets) {
    INFO("keys like " << keys[0]);
    FusedAdam adam(parameters, adam_options(0));
    load(adam, adam_state_with_keys(keys, saved_moments));
    const auto loaded = moments(adam, parameters);
    for (size_t i = 0; i < saved_moments.size(); ++i) CHECK(torch::equal(loaded[i], saved_moments[i]));
    for (const auto& p : parameters) {
      const auto& state = static_cast<torch::optim::AdamParamState&>(*adam.state().at(nmt::optimizer_state_key(p)));
      CHECK(state.step() == 7);
    }
    CHECK(static_cast<torch::optim::AdamOptions&>(adam.param_groups()[0].options()).weight_decay() == 0.5);
  }
}

TEST_CASE("Adam on parameters the one pass does not take is LibTorch's, gradients scaled", "[fused_adam]") {
  auto theirs = make_parameters(torch::kDouble);
  auto ours = copies(theirs);
  torch::optim::Adam reference(theirs, adam_options(0.01));
  FusedAdam fused(ours, adam_options(0.01));
  CHECK_FALSE(fused.one_pass());
  for (int step = 0; step < 3; ++step) {
    set_gradients(theirs, step);
    set_gradients(ours, step);
    libtorch_update(reference, theirs, 1.0);
    fused_update(fused, ours, 1.0);
  }
  CHECK(max_diff(ours, theirs) < 1e-12);
  CHECK_FALSE(FusedAdam(make_parameters(), adam_options(0).amsgrad(true)).one_pass());
}

TEST_CASE("the one pass counts as an in-place change of each parameter it updates", "[fused_adam]") {
  auto parameters = make_parameters();
  FusedAdam fused(parameters, adam_options(0));
  const auto saved_by_a_graph = parameters[1] * parameters[1];
  set_gradients(parameters, 0);
  const auto version = parameters[1]._version();
  fused.update(1.0);
  CHECK(parameters[1]._version() > version);
  CHECK_THROWS(saved_by_a_graph.sum().backward());  // the values it saved were overwritten
}

TEST_CASE("FusedAdam refuses a closure", "[fused_adam]") {
  auto parameters = make_parameters();
  FusedAdam fused(parameters, adam_options(0));
  CHECK_THROWS_AS(fused.step([] { return torch::zeros({}); }), nmt::Error);
}
