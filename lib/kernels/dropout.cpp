#include "nmt/kernels/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "nmt/kernels/isa_versions.h"
#include "nmt/base/error.h"

namespace nmt {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t kGrain = 1 << 15;  // elements per task: tasks of ~10 microseconds

// MurmurHash3's 32-bit finaliser: a bijection with full avalanche, in 32-bit integer
// arithmetic that vectorizes on AVX2 and AVX-512 alike.
inline uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

struct MaskKey {
  uint32_t low = 0, high = 0;  ///< the two halves of the seed
  uint32_t threshold = 0;      ///< keep when the hash is below: (1 - p) * 2^32
};

// `value` where keep is 1, +0 where it is 0 (even for an infinite or NaN value), as a bit
// mask: a branch or a select here kept GCC from vectorizing the loops.
inline float keep_or_zero(float value, uint32_t keep) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits &= 0u - keep;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

// Writes the mask of elements [begin, end) and x's kept, scaled values. Element i's hash
// takes the low and high halves of i; within one 2^32-aligned block the high half is
// fixed, so the loop runs on 32-bit lanes and vectorizes.
inline __attribute__((always_inline)) void drop_block_body(const float* x, float* out, uint8_t* mask,
                                                           uint32_t first_low, uint32_t count, uint32_t high_term,
                                                           MaskKey key, float scale) {
  for (uint32_t j = 0; j < count; ++j) {
    const uint32_t h = mix32(mix32((first_low + j) ^ key.low) + high_term);
    const uint32_t keep = h < key.threshold ? 1u : 0u;
    mask[j] = static_cast<uint8_t>(keep);
    out[j] = keep_or_zero(x[j] * scale, keep);
  }
}
NMT_ISA_VERSIONS(drop_block, drop_block_body)

void drop_range(const float* x, float* out, uint8_t* mask, int64_t begin, int64_t end, MaskKey key, float scale) {
  constexpr int64_t kBlock = int64_t{1} << 32;
  for (int64_t i = begin; i < end;) {
    const int64_t block_end = std::min(end, (i / kBlock + 1) * kBlock);
    drop_block(x + i, out + i, mask + i, static_cast<uint32_t>(i), static_cast<uint32_t>(block_end - i),
               key.high ^ static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32), key, scale);
    i = block_end;
  }
}

inline __attribute__((always_inline)) void masked_scale_body(const float* grad, const uint8_t* mask, float* out,
                                                             int64_t begin, int64_t end, float scale) {
  for (int64_t i = begin; i < end; ++i) out[i] = keep_or_zero(grad[i] * scale, mask[i]);
}
NMT_ISA_VERSIONS(masked_scale, masked_scale_body)
NMT_KERNEL_TABLE_ENTRY("dropout mask", "LibTorch's dropout (a model not computing in fp32 on the CPU)",
                       drop_block_widest, masked_scale_widest)

uint64_t draw_seed() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
}

struct DropoutFunction : torch::autograd::Function<DropoutFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input, double p) {
    const auto x = input.contiguous();
    const uint64_t seed = draw_seed();
    // 0 < p < 1, so (1 - p) * 2^32 is below 2^32.
    const MaskKey key{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                      static_cast<uint32_t>(std::ldexp(1.0 - p, 32))};
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    auto out = torch::empty_like(x);
    auto mask = torch::empty(x.sizes(), x.options().dtype(torch::kUInt8));
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    uint8_t* m = mask.data_ptr<uint8_t>();
    at::parallel_for(0, x.numel(), kGrain,
                     [&](int64_t begin, int64_t end) { drop_range(in, o, m, begin, end, key, scale); });
    ctx->save_for_backward({mask});
    ctx->saved_data["scale"] = static_cast<double>(scale);
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto mask = ctx->get_saved_variables()[0];
    const auto grad = grads[0].contiguous();
    const float scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    auto out = torch::empty_like(grad);
    const float* g = grad.data_ptr<float>();
    const uint8_t* m = mask.data_ptr<uint8_t>();
    float* o = out.data_ptr<float>();
    at::parallel_for(0, grad.numel(), kGrain,
                     [&](int64_t begin, int64_t end) { masked_scale(g, m, o, begin, end, scale); });
    return {out.view(mask.sizes()), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor dropout(const torch::Tensor& x, double p, bool training, KernelChoice kernel) {
  if (!(p >= 0 && p < 1)) throw Error("dropout probability must be in [0, 1), got " + std::to_string(p));
  if (!training || p == 0) return x;
  if (kernel == KernelChoice::torch_ops) return torch::dropout(x, p, true);
  // The kernel reads host memory: a tensor elsewhere is a set-up that was not redone.
  if (kernel_choice_for(x.device(), x.scalar_type()) != KernelChoice::cpu_fp32)
    throw Error(std::string("dropout: the CPU kernel was chosen but the tensor is ") + c10::toString(x.scalar_type()) +
                " on " + x.device().str() + " (the model was moved without deciding its kernels again)");
  return DropoutFunction::apply(x, p);
}

torch::Tensor dropout(const torch::Tensor& x, double p, bool training) {
  return dropout(x, p, training, kernel_choice_for(x.device(), x.scalar_type()));
}

}  // namespace nmt
