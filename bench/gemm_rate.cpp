// The fp32 GEMM rate a training step could reach: each matrix product of a Transformer
// training step (every Linear layer's forward, input-gradient and weight-gradient
// products, at a batch's row count) timed alone, on the BLAS that LibTorch calls
// (OpenBLAS here) and on oneDNN's sgemm, in the process's thread pool. Prints the rate of
// each and the rate of the whole step's products weighted by their FLOPs, and the FLOP
// count per target token that bench/train_speed.sh divides by.
//
// FLOP count: 2*in*out per row for each product (forward, grad input, grad weight: 3x
// the forward), rows = non-padding tokens; encoder layers and the cross-attention's
// key/value projection per source token, the rest per target token. Attention's own
// products (scores, context: 2*T*d per token and layer, ~1% at Multi30k's lengths) and
// everything that is not a product are not counted.
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "nmt/base/process_setup.h"
#include "nmt/base/config.h"
#include "nmt/base/cpu_features.h"
#include "nmt/models/onednn_gemm.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/text/prepared_corpus.h"

namespace {

struct Layer {
  std::string name;
  int64_t in = 0, out = 0;
  double per_target = 0, per_source = 0;  ///< how many of these products a token costs
};

std::vector<Layer> transformer_layers(const nmt::TransformerConfig& t, int64_t vocab) {
  const int64_t d = t.d_model, f = t.ffn_dim;
  const double enc = static_cast<double>(t.encoder_layers), dec = static_cast<double>(t.decoder_layers);
  return {
      {"self-attention q,k,v", d, 3 * d, dec, enc},
      {"attention outputs, cross-attention q", d, d, 3 * dec, enc},
      {"cross-attention k,v", d, 2 * d, 0, dec},
      {"feed-forward in", d, f, dec, enc},
      {"feed-forward out", f, d, dec, enc},
      {"output projection", d, vocab, 1, 0},
  };
}

template <typename F>
double seconds_per_call(F&& product, double budget) {
  product();  // warm-up: first-touch pages, oneDNN's kernel choice
  std::vector<double> times;
  const auto start = std::chrono::steady_clock::now();
  do {
    const auto t0 = std::chrono::steady_clock::now();
    product();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget ||
           times.size() < 3);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

struct Rates {
  double forward = 0, grad_input = 0, grad_weight = 0;  ///< seconds per call
};

Rates time_layer(const Layer& layer, int64_t rows, bool onednn, double budget) {
  const auto x = torch::randn({rows, layer.in});
  const auto w = torch::randn({layer.out, layer.in});
  const auto b = torch::randn({layer.out});
  const auto gy = torch::randn({rows, layer.out});
  Rates r;
  if (onednn) {
    r.forward = seconds_per_call([&] { nmt::onednn_linear(x, w, b); }, budget);
    r.grad_input = seconds_per_call([&] { nmt::onednn_matmul(gy, false, w, false); }, budget);
    r.grad_weight = seconds_per_call([&] { nmt::onednn_matmul(gy, true, x, false); }, budget);
  } else {
    r.forward = seconds_per_call([&] { torch::addmm(b, x, w.t()); }, budget);
    r.grad_input = seconds_per_call([&] { torch::mm(gy, w); }, budget);
    r.grad_weight = seconds_per_call([&] { torch::mm(gy.t(), x); }, budget);
  }
  return r;
}

double source_per_target(const std::string& corpus_path, int64_t max_length) {
  if (corpus_path.empty()) return 1.0;
  const auto corpus = nmt::PreparedCorpus::open(corpus_path);
  double source = 0, target = 0;
  for (size_t i = 0; i < corpus->size(); ++i) {
    const auto s = corpus->source_length(i), t = corpus->target_length(i);
    if (static_cast<int64_t>(std::max(s, t)) > max_length) continue;
    source += static_cast<double>(s) + 1;  // + eos
    target += static_cast<double>(t) + 1;  // + eos (the decoder's input has bos instead)
  }
  return target > 0 ? source / target : 1.0;
}

}  // namespace

int main(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"fp32 GEMM rate at a Transformer training step's shapes (bench/train_speed.sh)"};
  std::string config_path = "configs/transformer.json", corpus_path;
  int64_t vocab = 8000, rows = 4096;
  int threads = 2;
  double budget = 0.5;
  app.add_option("--config", config_path, "model config (model.transformer.*)");
  app.add_option("--vocab", vocab, "target vocabulary (the output projection's width)");
  app.add_option("--rows", rows, "rows per product (a batch's tokens)");
  app.add_option("--corpus", corpus_path, "prepared corpus (.nmtc): its source/target token ratio (default 1)");
  app.add_option("--threads", threads, "LibTorch threads");
  app.add_option("--seconds", budget, "time per product and library (median of the calls)");
  CLI11_PARSE(app, argc, argv);
  try {
    torch::set_num_threads(threads);
    const auto config = nmt::load_config(config_path);
    const double ratio = source_per_target(corpus_path, config.train.max_length);
    const auto layers = transformer_layers(config.model.section<nmt::TransformerConfig>(), vocab);
    std::printf("CPU features: %s; %d threads; %lld rows; source/target tokens %.3f\n",
                nmt::describe_cpu_features().c_str(), threads, static_cast<long long>(rows), ratio);
    std::printf("| product | in x out | per target token | blas fwd / dX / dW GFLOP/s | onednn fwd / dX / dW GFLOP/s |\n");
    std::printf("|---|---|---:|---|---|\n");
    double flop_per_token = 0, blas_seconds = 0, onednn_seconds = 0;
    for (const auto& layer : layers) {
      const double per_token = layer.per_target + ratio * layer.per_source;
      const double flop_per_call = 2.0 * static_cast<double>(rows * layer.in * layer.out);
      const auto blas = time_layer(layer, rows, false, budget);
      const bool has_onednn = nmt::onednn_fp32_gemm_enabled();
      const auto onednn = has_onednn ? time_layer(layer, rows, true, budget) : Rates{};
      auto gflops = [&](double seconds) { return seconds > 0 ? flop_per_call / seconds / 1e9 : 0.0; };
      std::printf("| %s | %lldx%lld | %.2f | %.0f / %.0f / %.0f | %.0f / %.0f / %.0f |\n", layer.name.c_str(),
                  static_cast<long long>(layer.in), static_cast<long long>(layer.out), per_token,
                  gflops(blas.forward), gflops(blas.grad_input), gflops(blas.grad_weight), gflops(onednn.forward),
                  gflops(onednn.grad_input), gflops(onednn.grad_weight));
      // Per target token: this layer's three products, `per_token` times.
      flop_per_token += 3 * 2.0 * static_cast<double>(layer.in * layer.out) * per_token;
      const double rows_d = static_cast<double>(rows);
      blas_seconds += (blas.forward + blas.grad_input + blas.grad_weight) * per_token / rows_d;
      onednn_seconds += (onednn.forward + onednn.grad_input + onednn.grad_weight) * per_token / rows_d;
    }
    std::printf("\nflop_per_target_token %.4e\n", flop_per_token);
    std::printf("blas_gflops %.1f\n", flop_per_token / blas_seconds / 1e9);
    if (onednn_seconds > 0) std::printf("onednn_gflops %.1f\n", flop_per_token / onednn_seconds / 1e9);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
