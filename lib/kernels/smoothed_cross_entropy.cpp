#include "nmt/kernels/smoothed_cross_entropy.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "nmt/kernels/isa_versions.h"
#include "nmt/base/error.h"
#include "nmt/kernels/vector_math.h"

namespace nmt {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// grad_j = weight * exp(z_j - lse) - uniform
inline __attribute__((always_inline)) void softmax_gradient_body(const float* z, float* grad, int64_t n, float lse,
                                                                 float weight, float uniform) {
  for (int64_t j = 0; j < n; ++j) grad[j] = weight * exp_approx(z[j] - lse) - uniform;
}
NMT_ISA_VERSIONS(softmax_gradient, softmax_gradient_body)
NMT_KERNEL_TABLE_ENTRY("smoothed cross-entropy", "LibTorch's log_softmax, gather and sums (a run not on the CPU)",
                       softmax_gradient_widest)

struct Rows {
  torch::Tensor logits;  ///< [N, V] contiguous
  torch::Tensor target;  ///< [N] int64 contiguous
};

Rows flatten(const torch::Tensor& logits, const torch::Tensor& target) {
  const auto vocab = logits.size(-1);
  if (target.numel() * vocab != logits.numel())
    throw Error("loss: " + std::to_string(target.numel()) + " targets for logits of " +
                std::to_string(logits.numel() / std::max<int64_t>(vocab, 1)) + " positions");
  if (vocab < 3) throw Error("loss: a vocabulary of " + std::to_string(vocab) + " ids has no id that can be a target");
  Rows rows{logits.reshape({-1, vocab}).contiguous(), target.reshape({-1}).to(torch::kLong).contiguous()};
  if (rows.target.numel() > 0) {
    const auto low = rows.target.min().item<int64_t>(), high = rows.target.max().item<int64_t>();
    if (low < 0 || high >= vocab)
      throw Error("loss: target id " + std::to_string(low < 0 ? low : high) + " outside the vocabulary of " +
                  std::to_string(vocab));
  }
  return rows;
}

struct SmoothedCrossEntropyFunction : torch::autograd::Function<SmoothedCrossEntropyFunction> {
  // Returns {loss, nll}; the second is not differentiable.
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& logits, const torch::Tensor& target,
                               double epsilon, int64_t pad, int64_t bos) {
    const auto rows = flatten(logits, target);
    const int64_t n = rows.logits.size(0), vocab = rows.logits.size(1);
    auto lse = torch::empty({n}, rows.logits.options());
    std::vector<double> loss_rows(static_cast<size_t>(n)), nll_rows(static_cast<size_t>(n));
    const float* z = rows.logits.data_ptr<float>();
    const int64_t* gold = rows.target.data_ptr<int64_t>();
    float* lse_out = lse.data_ptr<float>();
    const double smoothing = epsilon / static_cast<double>(vocab - 2);
    at::parallel_for(0, n, 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float* row = z + i * vocab;
        const auto sums = max_and_sum(row, vocab);
        lse_out[i] = sums.max + std::log(sum_exp(row, vocab, sums.max));
        if (gold[i] == pad) continue;
        const double nll = static_cast<double>(lse_out[i]) - row[gold[i]];
        const double allowed = static_cast<double>(sums.sum) - row[pad] - row[bos];
        const double uniform = static_cast<double>(lse_out[i]) - allowed / static_cast<double>(vocab - 2);
        nll_rows[i] = nll;
        loss_rows[i] = (1 - epsilon) * nll + epsilon * uniform;
      }
    });
    double loss = 0, nll = 0;  // in row order: the same sums whatever the threads
    for (int64_t i = 0; i < n; ++i) loss += loss_rows[i], nll += nll_rows[i];
    ctx->save_for_backward({rows.logits, rows.target, lse});
    ctx->saved_data["smoothing"] = smoothing;
    ctx->saved_data["epsilon"] = epsilon;
    ctx->saved_data["pad"] = pad;
    ctx->saved_data["bos"] = bos;
    ctx->saved_data["shape"] = logits.sizes().vec();
    auto loss_tensor = torch::tensor(loss, logits.options());
    auto nll_tensor = torch::tensor(nll, logits.options());
    ctx->mark_non_differentiable({nll_tensor});
    return {loss_tensor, nll_tensor};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& logits = saved[0];
    const auto& target = saved[1];
    const auto& lse = saved[2];
    const double epsilon = ctx->saved_data["epsilon"].toDouble();
    const double smoothing = ctx->saved_data["smoothing"].toDouble();
    const int64_t pad = ctx->saved_data["pad"].toInt(), bos = ctx->saved_data["bos"].toInt();
    const float g = grads[0].defined() ? grads[0].item<float>() : 0.0f;
    const int64_t n = logits.size(0), vocab = logits.size(1);
    auto grad = torch::empty_like(logits);
    const float* z = logits.data_ptr<float>();
    const int64_t* gold = target.data_ptr<int64_t>();
    const float* lse_in = lse.data_ptr<float>();
    float* out = grad.data_ptr<float>();
    const float uniform = static_cast<float>(g * smoothing);
    const float gold_share = static_cast<float>(g * (1 - epsilon));
    at::parallel_for(0, n, 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float* row = out + i * vocab;
        if (gold[i] == pad) {
          std::fill(row, row + vocab, 0.0f);
          continue;
        }
        softmax_gradient(z + i * vocab, row, vocab, lse_in[i], g, uniform);
        row[pad] += uniform;  // pad and bos get no smoothing mass
        row[bos] += uniform;
        row[gold[i]] -= gold_share;
      }
    });
    const auto shape = ctx->saved_data["shape"].toIntVector();
    return {grad.view(shape), torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool smoothed_cross_entropy_applies(const torch::Tensor& logits) {
  return logits.device().is_cpu() && logits.scalar_type() == torch::kFloat;
}

CrossEntropySums smoothed_cross_entropy(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                                        NonTargetIds ids) {
  const auto outputs = SmoothedCrossEntropyFunction::apply(logits, target, epsilon, ids.pad, ids.bos);
  return {outputs[0], outputs[1]};
}

}  // namespace nmt
