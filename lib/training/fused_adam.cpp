#include "nmt/training/fused_adam.h"

#include <ATen/Parallel.h>
#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "nmt/base/error.h"
#include "nmt/base/parallel_loops.h"
#include "nmt/kernels/adam_elements.h"
#include "nmt/kernels/kernel_choice.h"

namespace nmt {
namespace {

// The one-pass kernel reads each parameter's memory as a dense fp32 array.
bool dense_cpu_fp32(const torch::Tensor& t) {
  return t.defined() && kernel_choice_for(t.device(), t.scalar_type()) == KernelChoice::cpu_fp32 &&
         t.layout() == torch::kStrided && t.is_contiguous();
}

bool one_pass_applies(const std::vector<torch::Tensor>& parameters, const torch::optim::AdamOptions& options) {
  return !options.amsgrad() && std::all_of(parameters.begin(), parameters.end(), dense_cpu_fp32);
}

// The parameter's TensorImpl, whose address LibTorch 1.x prints into a string (with
// c10::guts::to_string, through an ostream) and 2.x keeps as it is. A template, so that
// only the branch of this LibTorch's key type is compiled.
template <typename Key>
Key state_key(const torch::Tensor& parameter) {
  void* const impl = parameter.unsafeGetTensorImpl();
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;
    text << impl;
    return text.str();
  } else {
    static_assert(std::is_same_v<Key, void*>, "a LibTorch whose Adam keys its state by neither");
    return impl;
  }
}

// The archive's moments are read onto the CPU; a run on CUDA keeps them with their
// parameter (LibTorch's step needs both on one device). A no-op on the CPU.
void on_device_of(const torch::Tensor& parameter, torch::optim::AdamParamState& state) {
  if (state.exp_avg().defined()) state.exp_avg(state.exp_avg().to(parameter.device()));
  if (state.exp_avg_sq().defined()) state.exp_avg_sq(state.exp_avg_sq().to(parameter.device()));
  if (state.max_exp_avg_sq().defined()) state.max_exp_avg_sq(state.max_exp_avg_sq().to(parameter.device()));
}

}  // namespace

OptimizerStateKey optimizer_state_key(const torch::Tensor& parameter) {
  return state_key<OptimizerStateKey>(parameter);
}

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

void FusedAdam::load(torch::serialize::InputArchive& archive) {
  c10::IValue format;
  if (!archive.try_read("pytorch_version", format)) return torch::optim::Adam::load(archive);  // before LibTorch 1.5
  if (!format.isString() || format.toStringRef() != "1.5.0")
    throw Error("the optimizer state has an unknown format (" + format.tagKind() + ")");
  torch::serialize::InputArchive state_archive, groups_archive;
  archive.read("state", state_archive);
  archive.read("param_groups", groups_archive);
  std::unordered_map<std::string, std::unique_ptr<torch::optim::AdamParamState>> saved;
  for (const auto& key : state_archive.keys()) {
    torch::serialize::InputArchive one;
    state_archive.read(key, one);
    saved[key] = std::make_unique<torch::optim::AdamParamState>();
    saved[key]->serialize(one);
  }
  torch::Tensor group_count;
  groups_archive.read("param_groups/size", group_count);
  if (group_count.item<int64_t>() != static_cast<int64_t>(param_groups_.size()))
    throw Error("the optimizer state has " + std::to_string(group_count.item<int64_t>()) +
                " parameter groups, this optimizer " + std::to_string(param_groups_.size()));
  state_.clear();
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    torch::serialize::InputArchive group;
    groups_archive.read("param_groups/" + std::to_string(g), group);
    auto& parameters = param_groups_[g].params();
    torch::Tensor count;
    group.read("params/size", count);
    if (count.item<int64_t>() != static_cast<int64_t>(parameters.size()))
      throw Error("the optimizer state has " + std::to_string(count.item<int64_t>()) + " parameters, the model " +
                  std::to_string(parameters.size()));
    for (size_t i = 0; i < parameters.size(); ++i) {
      c10::IValue key;
      group.read("params/" + std::to_string(i), key);
      const auto found = saved.find(key.toStringRef());
      if (found == saved.end()) continue;
      on_device_of(parameters[i], *found->second);
      state_[optimizer_state_key(parameters[i])] = std::move(found->second);
    }
    torch::serialize::InputArchive options_archive;
    group.read("options", options_archive);
    auto options = std::make_unique<torch::optim::AdamOptions>();
    options->serialize(options_archive);
    param_groups_[g].set_options(std::move(options));
  }
}

torch::optim::AdamParamState& FusedAdam::state_of(const torch::Tensor& parameter) {
  auto& slot = state_[optimizer_state_key(parameter)];
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
