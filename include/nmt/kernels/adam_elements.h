#pragma once
// Adam's arithmetic on arrays of floats: the inner loop of FusedAdam's one pass
// (training/fused_adam.h). A file of its own, compiled without errno for math functions and so
// without the library's precompiled LibTorch headers (built with errno): where sqrt may
// set errno, GCC keeps the loop scalar, and a scalar square root and two divisions per
// element made the one pass slower than LibTorch's eight vectorised ones.
#include <cstdint>

namespace nmt {

// Adam's constants for one parameter's update, as floats (the precision LibTorch's fp32
// kernels use them in).
struct AdamCoefficients {
  float gradient_scale;      // the clipping factor
  float weight_decay;        // L2, added to the gradient
  float beta1, one_minus_beta1;
  float beta2, one_minus_beta2;
  float sqrt_bias_correction2;
  float eps;
  float negative_step_size;  // -lr / bias_correction1
};

/// Elements [0, n) of one parameter, in LibTorch's order of operations:
/// g = gradient x scale (+ weight_decay x parameter); exp_avg.mul_(b1).add_(g, 1 - b1);
/// exp_avg_sq.mul_(b2).addcmul_(g, g, 1 - b2); denom = sqrt(exp_avg_sq) / sqrt(bc2) + eps;
/// parameter.addcdiv_(exp_avg, denom, -step_size), which multiplies before it divides.
/// The arrays must not overlap.
void adam_elements(float* parameter, const float* gradient, float* exp_avg, float* exp_avg_sq, int64_t n,
                   const AdamCoefficients& c);

}  // namespace nmt
