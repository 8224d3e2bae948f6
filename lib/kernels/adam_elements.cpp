#include "nmt/kernels/adam_elements.h"

#include <cmath>

#include "nmt/kernels/isa_versions.h"

#ifndef __NO_MATH_ERRNO__
#error "adam_elements.cpp must be compiled with -fno-math-errno (CMakeLists.txt): sqrt would stay scalar"
#endif

namespace nmt {

namespace {

// Compiled per instruction set: with no fused multiply-adds (-ffp-contract=off) and IEEE
// square root and division, every version gives the same bits; wider vectors only go faster.
inline __attribute__((always_inline)) void adam_elements_body(float* __restrict__ parameter,
                                                              const float* __restrict__ gradient,
                                                              float* __restrict__ exp_avg,
                                                              float* __restrict__ exp_avg_sq, int64_t n,
                                                              const AdamCoefficients& c) {
  const AdamCoefficients k = c;  // a local copy: the stores below cannot change it
  const bool decays = k.weight_decay != 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    float g = gradient[i] * k.gradient_scale;
    if (decays) g = g + k.weight_decay * parameter[i];
    const float m = exp_avg[i] * k.beta1 + k.one_minus_beta1 * g;
    const float v = exp_avg_sq[i] * k.beta2 + k.one_minus_beta2 * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    const float denom = std::sqrt(v) / k.sqrt_bias_correction2 + k.eps;
    parameter[i] = parameter[i] + k.negative_step_size * m / denom;
  }
}
NMT_ISA_VERSIONS(adam_elements_versions, adam_elements_body)
NMT_KERNEL_TABLE_ENTRY("Adam elements",
                       "torch::optim::Adam's step (amsgrad, or a parameter that is not dense fp32 on the CPU)",
                       adam_elements_versions_widest)

}  // namespace

void adam_elements(float* parameter, const float* gradient, float* exp_avg, float* exp_avg_sq, int64_t n,
                   const AdamCoefficients& c) {
  adam_elements_versions(parameter, gradient, exp_avg, exp_avg_sq, n, c);
}

}  // namespace nmt
