#include "nmt/models/linear.h"

#include <torch/autograd.h>
#include <torch/nn/functional/linear.h>
#include <torch/nn/modules/linear.h>

#include <utility>

#include "nmt/base/error.h"
#include "nmt/models/onednn_gemm.h"

namespace nmt {
namespace {

namespace F = torch::nn::functional;
constexpr auto kBf16 = torch::kBFloat16;

// x W^T through oneDNN's sgemm, with its two backward products through it too
// (grad_x = grad_y W, grad_W = grad_y^T x): fp32 training where oneDNN is the faster GEMM.
// The bias is added outside, by autograd (a custom function's inputs must be defined).
struct OnednnProductFunction : torch::autograd::Function<OnednnProductFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight) {
    ctx->save_for_backward({x, weight});
    return onednn_linear(x, weight, torch::Tensor());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto grad = grads[0].contiguous();
    torch::Tensor grad_x, grad_weight;
    if (ctx->needs_input_grad(0)) grad_x = onednn_matmul(grad, false, saved[1], false);
    if (ctx->needs_input_grad(1)) grad_weight = onednn_matmul(grad, true, saved[0], false);
    return {grad_x, grad_weight};
  }
};

// Without gradients recorded (inference, validation) the product alone: no graph node.
torch::Tensor onednn_fp32_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const bool records = torch::GradMode::is_enabled() &&
                       (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  if (!records) return onednn_linear(x, weight, bias);
  auto product = OnednnProductFunction::apply(x, weight);
  return bias.defined() ? product.add_(bias) : product;
}

// Autograd records the casts, so the gradients reach the fp32 weights in fp32.
torch::Tensor bf16_cast_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const auto low_bias = bias.defined() ? bias.to(kBf16) : bias;
  return F::linear(x.to(kBf16), weight.to(kBf16), low_bias).to(x.scalar_type());
}

// The bf16 weight packed for oneDNN's matmul where it runs that on AMX, else null.
std::shared_ptr<const OnednnAmxWeight> amx_packing(const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!onednn_amx_enabled(AmxProduct::bf16) || !weight.device().is_cpu()) return nullptr;
  return std::make_shared<const OnednnAmxWeight>(AmxProduct::bf16, weight, bias);
}

}  // namespace

torch::Tensor LinearImpl::packed_product(const torch::Tensor& x) const {
  // The packed copy holds no gradient: a layer on this path is for inference only.
  if (torch::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad()))
    throw Error("the fp32_packed path is for inference: its products record no gradients (run under NoGradGuard)");
  return packed_->apply(x);
}

torch::Tensor fp32_weight_linear(LinearPath path, const torch::Tensor& x, const torch::Tensor& weight,
                                 const torch::Tensor& bias) {
  switch (path) {
    case LinearPath::fp32_torch: return F::linear(x, weight, bias);
    case LinearPath::fp32_onednn:
    case LinearPath::fp32_packed: return onednn_fp32_linear(x, weight, bias);
    case LinearPath::bf16_mixed: return bf16_cast_linear(x, weight, bias);
    case LinearPath::bf16_weights:
    case LinearPath::int8: break;
  }
  throw Error("the " + linear_path_name(path) + " path reads converted weights, not fp32 ones");
}

LinearImpl::LinearImpl(int64_t in, int64_t out, bool with_bias) : owns_weight_(true) {
  // LibTorch's own layer draws the initial values, so a seed gives the weights it gave
  // before this class existed.
  const torch::nn::Linear initial(torch::nn::LinearOptions(in, out).bias(with_bias));
  weight = register_parameter("weight", initial->weight);
  if (with_bias) bias = register_parameter("bias", initial->bias);
}

LinearImpl::LinearImpl(torch::Tensor shared_weight, torch::Tensor shared_bias)
    : weight(std::move(shared_weight)), bias(std::move(shared_bias)), owns_weight_(false) {}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  if (x.dim() == 2) return product(x);
  auto sizes = x.sizes().vec();
  auto flat = product(x.reshape({-1, sizes.back()}));
  sizes.back() = flat.size(1);
  return flat.view(sizes);
}

torch::Tensor LinearImpl::product(const torch::Tensor& x) const {
  switch (path_) {
    case LinearPath::int8: return int8_linear(x, int8_, bias).to(x.scalar_type());
    case LinearPath::bf16_weights:
      if (amx_) return amx_->apply(x).to(x.scalar_type());
      return F::linear(x.to(kBf16), weight, bias).to(x.scalar_type());
    case LinearPath::fp32_packed: return packed_product(x);
    case LinearPath::fp32_torch:
    case LinearPath::fp32_onednn:
    case LinearPath::bf16_mixed: break;
  }
  return fp32_weight_linear(path_, x, weight, bias);
}

LinearImpl::Converted LinearImpl::convert_for(LinearPath path) const {
  torch::NoGradGuard no_grad;
  Converted converted;
  if (path == LinearPath::int8) converted.int8 = quantize_weight_int8(weight);
  if (path == LinearPath::fp32_packed) converted.packed = std::make_shared<const OnednnPackedWeight>(weight, bias);
  if (path == LinearPath::bf16_weights) {
    converted.weight = weight.detach().to(kBf16);
    if (bias.defined()) converted.bias = bias.detach().to(kBf16);
    converted.amx = amx_packing(converted.weight, converted.bias);
  }
  return converted;
}

void LinearImpl::use_path(LinearPath path, Converted converted) {
  if (path == path_) return;
  if (converts_weights(path_))
    throw Error("a Linear layer converted for " + linear_path_name(path_) + " cannot take the " +
                linear_path_name(path) + " path (its weights were rounded)");
  if (path == LinearPath::fp32_packed && !converted.packed)
    throw Error("the fp32_packed path needs the packed weight (convert_for(fp32_packed))");
  torch::NoGradGuard no_grad;
  if (path == LinearPath::bf16_weights) {
    if (owns_weight_) {
      weight.set_data(converted.weight);
      if (bias.defined()) bias.set_data(converted.bias);
    } else {
      weight = register_buffer("weight_bf16", converted.weight);
      if (bias.defined()) bias = register_buffer("bias_bf16", converted.bias);
    }
  }
  if (path == LinearPath::int8) {
    int8_.values = register_buffer("weight_int8", converted.int8.values);
    int8_.scales = register_buffer("weight_scales", converted.int8.scales);
    int8_.compensation = register_buffer("weight_compensation", converted.int8.compensation);
    int8_.packed = std::move(converted.int8.packed);
    // Nothing reads the fp32 weight any more: it leaves the parameters (an undefined
    // entry is skipped by named_parameters, save and to()), and the member.
    if (owns_weight_) parameters_["weight"] = torch::Tensor();
    weight = torch::Tensor();
  }
  packed_ = path == LinearPath::fp32_packed ? std::move(converted.packed) : nullptr;
  amx_ = path == LinearPath::bf16_weights ? std::move(converted.amx) : nullptr;
  path_ = path;
}

std::shared_ptr<LinearImpl> LinearImpl::output_rows(const torch::Tensor& rows) const {
  torch::NoGradGuard no_grad;
  const auto pick = [&rows](const torch::Tensor& t) {
    return t.defined() ? t.index_select(0, rows).contiguous() : torch::Tensor();
  };
  auto part = std::make_shared<LinearImpl>(pick(weight), pick(bias));
  part->path_ = path_;
  if (path_ == LinearPath::fp32_packed) part->packed_ = std::make_shared<const OnednnPackedWeight>(part->weight, part->bias);
  if (path_ == LinearPath::int8)
    part->int8_ = with_amx_packing({pick(int8_.values), pick(int8_.scales), pick(int8_.compensation), {}});
  if (amx_) part->amx_ = amx_packing(part->weight, part->bias);
  return part;
}

}  // namespace nmt
