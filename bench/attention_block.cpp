// One attention block's own work in training, timed two ways in one process: the heads of
// a fused q,k,v projection (permuted views), q k^T, softmax, weights v, heads merged,
// forward and backward, through torch::matmul (one BLAS call per sentence and head) and
// through the library's batched products (kernels/attention_products.h).
// Prints the median time per block (and the range) of each, for sentences of T tokens
// filling a batch of --tokens tokens, and the largest gradient difference between them.
// Usage: build/bench/attention_block [--lengths 8,14,24,40] [--tokens 4060] [--threads 2]
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "nmt/base/process_setup.h"
#include "nmt/base/cpu_features.h"
#include "nmt/kernels/attention_products.h"

namespace {

constexpr int64_t kHeads = 4, kHeadWidth = 64;  // the Transformer preset's
constexpr int kRepeats = 7, kCallsPerRepeat = 10;

// The gradient of the projection after one block, forward and backward.
torch::Tensor block(const torch::Tensor& input, bool batched) {
  const auto projection = input.detach().clone().requires_grad_();
  const int64_t batch = input.size(0), length = input.size(1);
  const auto parts = projection.view({batch, length, 3, kHeads, kHeadWidth}).permute({2, 0, 3, 1, 4}).unbind(0);
  const auto scores = batched ? nmt::attention_scores(parts[0], parts[1])
                              : torch::matmul(parts[0], parts[1].transpose(-2, -1));
  const auto weights = torch::softmax(scores.mul(1.0 / 8.0), -1);
  const auto context = batched ? nmt::attention_context(weights, parts[2]) : torch::matmul(weights, parts[2]);
  const auto merged = context.transpose(1, 2).reshape({batch, length, kHeads * kHeadWidth});
  merged.backward(torch::ones_like(merged));
  return projection.grad();
}

// Median and range of kRepeats timings of kCallsPerRepeat blocks, in ms per block.
std::vector<double> time_blocks(const torch::Tensor& input, bool batched) {
  block(input, batched);  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < kRepeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCallsPerRepeat; ++i) block(input, batched);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                 kCallsPerRepeat);
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Times one attention block, forward and backward: torch::matmul against the batched products."};
  std::vector<int64_t> lengths{8, 14, 24, 40};
  int64_t tokens = 4060;
  int threads = 2;
  app.add_option("--lengths", lengths, "sentence lengths to time")->delimiter(',');
  app.add_option("--tokens", tokens, "tokens per batch (sentences = tokens / length)")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "LibTorch threads")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  torch::set_num_threads(threads);
  std::printf("CPU features: %s; %d threads; %lld tokens per batch; heads %lld x %lld\n",
              nmt::describe_cpu_features().c_str(), threads, static_cast<long long>(tokens),
              static_cast<long long>(kHeads), static_cast<long long>(kHeadWidth));
  std::printf("| T | sentences | torch::matmul ms | batched products ms | ratio | max gradient difference |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  for (const int64_t length : lengths) {
    if (length < 1 || length > tokens) continue;
    const int64_t batch = tokens / length;
    torch::manual_seed(1);
    const auto input = torch::randn({batch, length, 3 * kHeads * kHeadWidth});
    const double difference = (block(input, false) - block(input, true)).abs().max().item<double>();
    const auto matmul = time_blocks(input, false), batched = time_blocks(input, true);
    std::printf("| %lld | %lld | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.2f | %.1e |\n", static_cast<long long>(length),
                static_cast<long long>(batch), matmul[kRepeats / 2], matmul.front(), matmul.back(),
                batched[kRepeats / 2], batched.front(), batched.back(), matmul[kRepeats / 2] / batched[kRepeats / 2],
                difference);
  }
}
