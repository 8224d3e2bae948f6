#pragma once
// How the products x W^T + b of a model's Linear layers are computed: one value, decided
// when the model is set up (built, converted for inference, or put into a training mode),
// never at the call. A layer's forward is a switch on its stored path (linear.h).
//
//   fp32_torch    LibTorch's linear (the BLAS): fp32 training without AVX-512, and how a
//                 model is built.
//   fp32_onednn   oneDNN's sgemm (onednn_gemm.h), forward and backward: validation on the
//                 CPU (the weights change between validations), fp32 training on CPUs
//                 with AVX-512, and fp32 inference where fp32_packed is not available.
//   fp32_packed   fp32 inference on the CPU over weights packed once into oneDNN's GEMM
//                 layout (onednn_packed_weight.h): sgemm without its packing at every
//                 call. Only for weights that no longer change (WeightUpdates::none).
//   bf16_mixed    mixed-precision training: fp32 master weights cast to bf16 at every
//                 forward; autograd casts the gradients back to fp32.
//                 The same path on CUDA (cuBLAS's bf16 GEMM), rather than LibTorch's
//                 autocast: autocast's C++ switches differ between the LibTorch versions
//                 the project builds against (1.13: at::autocast::set_enabled and
//                 set_autocast_gpu_dtype, CUDA only; 2.4+: set_autocast_enabled(device
//                 type, bool), the old ones deprecated), it is thread-local state a
//                 caller must scope around every forward, and its op lists would also cast
//                 attention's products, which stay fp32 here. Our casts are explicit
//                 per Linear, the same on CPU and CUDA, and keep the loss and the
//                 weights fp32.
//   bf16_weights  bf16 inference: the weights were converted once (Transformer only).
//   int8          int8 inference: the weights were quantized once (int8_linear.h;
//                 Transformer only).
#include <torch/types.h>

#include <string>

#include "nmt/models/precision.h"

namespace nmt {

enum class LinearPath { fp32_torch, fp32_onednn, fp32_packed, bf16_mixed, bf16_weights, int8 };

/// Whether a model's weights can change while it is on an inference path: a validation
/// network reads the training weights as they are updated (network_sharing_weights), so
/// its layers must read them where they are, not a copy made once.
enum class WeightUpdates { none, by_training };

/// "fp32_torch", "fp32_onednn", ... (the enumerator's name).
std::string linear_path_name(LinearPath path);

/// What runs on `path` on this machine, for --verbose: the library, the kernel and the
/// instruction set it uses (cpu_features(), so NMT_CPU_ISA counts).
/// On another device than the CPU (CUDA) the same path runs LibTorch's linear there
/// (cuBLAS); fp32_onednn and int8 are CPU paths (their products read host memory).
std::string describe_linear_path(LinearPath path, const torch::Device& device = torch::kCPU);

/// Whether taking `path` converts the weights for good (bf16_weights, int8): a model on it
/// cannot take another path.
bool converts_weights(LinearPath path);

/// Whether products on `path` compute in bf16 (bf16_mixed, bf16_weights).
bool computes_in_bf16(LinearPath path);

/// The path of inference in `precision` on `device`: fp32 on the CPU over packed weights
/// where oneDNN's matmul was found and the weights stay fixed (fp32_packed), else through
/// oneDNN's sgemm when it was found (onednn_fp32_gemm_enabled), else LibTorch's; bf16 and
/// int8 convert the weights. Checks the support first (require_precision_support).
LinearPath inference_path(Precision precision, const torch::Device& device,
                          WeightUpdates updates = WeightUpdates::none);

/// The path of fp32 training on `device`: fp32_onednn on a CPU with AVX-512 (after the
/// NMT_CPU_ISA cap) where oneDNN's sgemm was found, else fp32_torch.
LinearPath fp32_training_path(const torch::Device& device);

/// The path of training in `precision` (from resolve_training_precision) on `device`:
/// fp32_training_path or bf16_mixed; int8 throws nmt::Error.
LinearPath training_path(Precision precision, const torch::Device& device);

}  // namespace nmt
