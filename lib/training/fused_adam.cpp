#include "nmt/training/fused_adam.h"

#include <ATen/Parallel.h>
#include <c10/util/C++17.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "nmt/base/error.h"
#include "nmt/base/parallel_loops.h"
#include "adam_elements.h"

namespace nmt {
namespace {

bool dense_cpu_fp32(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.layout() == torch::kStrided &&
         t.is_contiguous();
}

bool one_pass_applies(const std::vector<torch::Tensor>& parameters, const torch::optim::AdamOptions& options) {
  return !options.amsgrad() && std::all_of(parameters.begin(), parameters.end(), dense_cpu_fp32);
}

// The same key Adam::step and Adam::load use, so either finds the other's state.
std::string state_key(const torch::Tensor& parameter) {
  return c10::guts::to_string(parameter.unsafeGetTensorImpl());
}

}  // namespace

FusedAdam::FusedAdam(const std::vector<torch::Tensor>& parameters, torch::optim::AdamOptions options)
    : torch::optim::Adam(parameters, options), one_pass_(one_pass_applies(parameters, options)) {}

torch::Tensor FusedAdam::step(LossClosure closure) {
  if (closure) throw Error("FusedAdam::step takes no closure");
  update(1.0);
  return {};
}

void FusedAdam::update(double gradient_scale) {
  torch::NoGradGuard no_grad;
  if (!one_pass_) {
    if (gradient_scale != 1.0)
      for (auto& group : param_groups_)
        for (auto& parameter : group.params())
          if (parameter.grad().defined()) parameter.grad().mul_(gradient_scale);
    torch::optim::Adam::step();
    return;
  }
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
    for (auto& parameter : group.params())
      if (parameter.grad().defined()) one_pass_update(parameter, options, gradient_scale);
  }
}

torch::optim::AdamParamState& FusedAdam::state_of(const torch::Tensor& parameter) {
  auto& slot = state_[state_key(parameter)];
  if (!slot) {
    auto fresh = std::make_unique<torch::optim::AdamParamState>();
    fresh->step(0);
    fresh->exp_avg(torch::zeros_like(parameter, torch::MemoryFormat::Contiguous));
    fresh->exp_avg_sq(torch::zeros_like(parameter, torch::MemoryFormat::Contiguous));
    slot = std::move(fresh);
  }
  return static_cast<torch::optim::AdamParamState&>(*slot);
}

void FusedAdam::one_pass_update(torch::Tensor& parameter, const torch::optim::AdamOptions& options,
                                double gradient_scale) {
  if (!dense_cpu_fp32(parameter))
    throw Error("FusedAdam: a parameter is no longer a contiguous fp32 CPU tensor (it was at construction)");
  const auto gradient = parameter.grad().contiguous();
  if (gradient.layout() != torch::kStrided || gradient.scalar_type() != torch::kFloat)
    throw Error("FusedAdam: gradients must be dense fp32 tensors");
  auto& state = state_of(parameter);
  auto& exp_avg = state.exp_avg();
  auto& exp_avg_sq = state.exp_avg_sq();
  if (!dense_cpu_fp32(exp_avg) || !dense_cpu_fp32(exp_avg_sq) || exp_avg.sizes() != parameter.sizes() ||
      exp_avg_sq.sizes() != parameter.sizes())
    throw Error("FusedAdam: the stored Adam moments do not match their parameter's shape and type");
  state.step(state.step() + 1);

  const auto [beta1, beta2] = options.betas();
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(state.step()));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(state.step()));
  const AdamCoefficients c{static_cast<float>(gradient_scale),
                           static_cast<float>(options.weight_decay()),
                           static_cast<float>(beta1),
                           static_cast<float>(1 - beta1),
                           static_cast<float>(beta2),
                           static_cast<float>(1 - beta2),
                           static_cast<float>(std::sqrt(bias_correction2)),
                           static_cast<float>(options.eps()),
                           static_cast<float>(-options.lr() / bias_correction1)};
  float* p = parameter.data_ptr<float>();
  const float* g = gradient.data_ptr<float>();
  float* m = exp_avg.data_ptr<float>();
  float* v = exp_avg_sq.data_ptr<float>();
  at::parallel_for(0, parameter.numel(), items_per_task(1), [&](int64_t begin, int64_t end) {
    adam_elements(p + begin, g + begin, m + begin, v + begin, end - begin, c);
  });
  // Written through a raw pointer: counted as an in-place change, as addcdiv_ would be, so
  // autograd refuses a graph that saved the old values instead of using them silently.
  parameter.unsafeGetTensorImpl()->bump_version();
}

double clipping_factor(const std::vector<torch::Tensor>& parameters, double max_norm) {
  torch::NoGradGuard no_grad;
  double sum_of_squares = 0;
  for (const auto& parameter : parameters) {
    if (!parameter.grad().defined()) continue;
    const double norm = parameter.grad().norm().item<double>();
    sum_of_squares += norm * norm;
  }
  return std::min(1.0, max_norm / (std::sqrt(sum_of_squares) + 1e-6));
}

void release_gradients(const std::vector<torch::Tensor>& parameters) {
  for (auto parameter : parameters) parameter.mutable_grad().reset();
}

}  // namespace nmt
