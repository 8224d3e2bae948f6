#pragma once
// Inverted dropout for training: each element kept with probability 1 - p and scaled by
// 1 / (1 - p), else 0; the gradient is masked and scaled the same way.
//
// LibTorch's CPU dropout draws its Bernoulli mask one element at a time in one thread
// (without MKL, as Debian builds it): about a tenth of a Transformer training step on 2
// cores, with the other thread waiting. Here the mask comes from a counter-based hash of
// (a 64-bit seed, the element's index), computed on all threads in vector registers, and
// is kept as bytes. The seed is drawn from LibTorch's default CPU generator, so the run's
// seed still decides every mask, the same on any number of threads, and a checkpoint's
// generator state still makes resume exact.
#include <torch/types.h>

#include "nmt/kernels/kernel_choice.h"

namespace nmt {

/// x unchanged when not training or p is 0; else dropped out as above (differentiable), by
/// `kernel`, decided where the model is set up (kernel_choice.h): cpu_fp32 the kernel
/// (x must be fp32 on the CPU: nmt::Error otherwise), torch_ops LibTorch's dropout (any
/// device and dtype, CUDA's included). Throws nmt::Error for p outside [0, 1).
torch::Tensor dropout(const torch::Tensor& x, double p, bool training, KernelChoice kernel);

/// dropout with the kernel chosen for x's device and dtype: for tests and callers without
/// a set-up of their own.
torch::Tensor dropout(const torch::Tensor& x, double p, bool training);

}  // namespace nmt
