// What the trainer does after backward, for a preset's parameters, timed two ways in one
// process (alternated): LibTorch's (backward's add into the zeroed gradients,
// clip_grad_norm_, torch::optim::Adam's step, zero_grad) and the library's
// (the gradient stored as backward stores it into a released slot, clipping_factor,
// FusedAdam::update, release_gradients; training/fused_adam.h). The gradients are the same
// random tensors every update. Prints the median ms per update and the range.
// Usage: build/bench/optimizer_step [--config configs/transformer.json] [--vocab 8000] [--threads 2]
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "nmt/base/process_setup.h"
#include "nmt/base/config.h"
#include "nmt/base/cpu_features.h"
#include "nmt/models/registry.h"
#include "nmt/training/fused_adam.h"

namespace {

constexpr int kRepeats = 9, kUpdatesPerRepeat = 10;
constexpr double kClipNorm = 1.0;

using Parameters = std::vector<torch::Tensor>;

torch::optim::AdamOptions adam_options() { return torch::optim::AdamOptions(1e-4).betas({0.9, 0.98}).eps(1e-9); }

void libtorch_update(torch::optim::Adam& adam, Parameters& parameters, const Parameters& gradients) {
  for (size_t i = 0; i < parameters.size(); ++i) parameters[i].mutable_grad().add_(gradients[i]);
  torch::nn::utils::clip_grad_norm_(parameters, kClipNorm);
  adam.step();
  adam.zero_grad();
}

void fused_update(nmt::FusedAdam& adam, Parameters& parameters, const Parameters& gradients) {
  for (size_t i = 0; i < parameters.size(); ++i) parameters[i].mutable_grad() = gradients[i];
  adam.update(nmt::clipping_factor(parameters, kClipNorm));
  nmt::release_gradients(parameters);
}

double ms_per_update(const std::function<void()>& update) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kUpdatesPerRepeat; ++i) update();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
         kUpdatesPerRepeat;
}

}  // namespace

int main(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Times the optimizer update of a preset's parameters: LibTorch's Adam against FusedAdam."};
  std::string config_path = "configs/transformer.json";
  int64_t vocab = 8000;
  int threads = 2;
  app.add_option("--config", config_path, "the preset whose model's parameters are updated");
  app.add_option("--vocab", vocab, "source and target vocabulary size")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "LibTorch threads")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  torch::set_num_threads(threads);
  torch::manual_seed(1);

  auto config = nmt::load_config(config_path);
  config.model.source_vocab = config.model.target_vocab = vocab;
  auto theirs = nmt::build_model(config.model)->parameters();
  Parameters ours, gradients;
  int64_t elements = 0;
  for (auto& p : theirs) {
    ours.push_back(p.detach().clone().requires_grad_());
    gradients.push_back(torch::randn_like(p).detach());
    p.mutable_grad() = torch::zeros_like(p);
    elements += p.numel();
  }
  torch::optim::Adam libtorch_adam(theirs, adam_options());
  nmt::FusedAdam fused_adam(ours, adam_options());
  std::printf("CPU features: %s; %d threads; %s: %zu parameter tensors, %lld elements; fused path: %s\n",
              nmt::describe_cpu_features().c_str(), threads, config_path.c_str(), theirs.size(),
              static_cast<long long>(elements), fused_adam.one_pass() ? "one pass" : "LibTorch's step");

  libtorch_update(libtorch_adam, theirs, gradients);  // warm-up: creates the moments
  fused_update(fused_adam, ours, gradients);
  std::vector<double> libtorch_ms, fused_ms;
  for (int r = 0; r < kRepeats; ++r) {  // who goes first alternates
    const auto time_libtorch = [&] { libtorch_ms.push_back(ms_per_update([&] { libtorch_update(libtorch_adam, theirs, gradients); })); };
    const auto time_fused = [&] { fused_ms.push_back(ms_per_update([&] { fused_update(fused_adam, ours, gradients); })); };
    if (r % 2 == 0) { time_libtorch(); time_fused(); } else { time_fused(); time_libtorch(); }
  }
  std::sort(libtorch_ms.begin(), libtorch_ms.end());
  std::sort(fused_ms.begin(), fused_ms.end());
  double difference = 0;
  for (size_t i = 0; i < theirs.size(); ++i)
    difference = std::max(difference, (theirs[i] - ours[i]).abs().max().item<double>());
  std::printf("| update | ms (median, range of %d x %d) |\n|---|---:|\n", kRepeats, kUpdatesPerRepeat);
  std::printf("| LibTorch: add into zeroed gradients, clip_grad_norm_, Adam::step, zero_grad | %.2f (%.2f-%.2f) |\n",
              libtorch_ms[kRepeats / 2], libtorch_ms.front(), libtorch_ms.back());
  std::printf("| library: stored gradients, clipping_factor, FusedAdam::update, release_gradients | %.2f (%.2f-%.2f) |\n",
              fused_ms[kRepeats / 2], fused_ms.front(), fused_ms.back());
  std::printf("ratio %.2f; largest parameter difference after %d updates: %.1e\n",
              libtorch_ms[kRepeats / 2] / fused_ms[kRepeats / 2], 1 + kRepeats * kUpdatesPerRepeat, difference);
}
