#pragma once
// Arithmetic precision of the matrix products, as the user chooses it. fp32 is the
// default and exact; bf16 runs the Linear layers' GEMMs in bfloat16 (8-bit mantissa) with
// fp32 accumulation inside oneDNN, while embeddings, layer norms, attention, softmax and
// the loss stay fp32; int8 (inference) quantizes the Linear weights (int8_linear.h).
// What a precision means for each layer is decided once, as a LinearPath
// (linear_path.h: inference_path, training_path) that the model's layers keep:
//  - Inference: the weights are converted once (Seq2SeqModel::use_linear_path).
//  - Training: fp32 master weights; on bf16_mixed each forward casts them, and autograd
//    casts the gradients back, so the optimiser updates fp32 parameters. Every family:
//    the RNN families' Linear layers and the attention decoder's GRU cells
//    (gru_cell_step); what stays fp32 in training: the nn::GRU layers (the encoders, the
//    GRU family's decoder).
// Only where the CPU multiplies bf16 natively (AVX512-BF16); elsewhere oneDNN emulates
// it, slower than fp32, so it is refused (require_precision_support).
#include <torch/types.h>

#include <string>
#include <vector>

namespace nmt {

enum class Precision { fp32, bf16, int8 };

/// The --precision help text the tools share.
inline constexpr const char* kPrecisionHelp =
    "fp32 (default, exact); bf16: matrix products in bfloat16 (needs AVX512-BF16); int8: dynamic "
    "int8 Linear layers (faster on CPUs with AVX512-VNNI, less so on AVX2). Transformer only; "
    "speed and BLEU of each in bench/RESULTS.md";

/// "fp32" / "bf16" / "int8"; anything else throws nmt::Error listing them.
Precision parse_precision(const std::string& name);
std::string precision_name(Precision precision);
std::vector<std::string> precision_names();

/// Whether `precision` runs natively on `device` (what require_precision_support checks).
bool precision_supported(Precision precision, const torch::Device& device);

/// train.precision: "fp32", "bf16" (checked: require_precision_support) or "auto": bf16
/// on a CPU that multiplies bf16 natively or a CUDA GPU that does (cuda_supports_bf16:
/// compute capability 8.0+), fp32 otherwise (any family: bf16 applies to
/// its Linear layers and GRU cells). int8 is for inference only (an error here).
Precision resolve_training_precision(const std::string& name, const torch::Device& device);

/// Throws nmt::Error when `precision` would be slow or unsupported on `device` (a CPU
/// without AVX512-BF16 for bf16, without AVX2 or oneDNN's int8 GEMM for int8). CUDA:
/// bf16 on compute capability 8.0+ only (base/device.h: cuda_supports_bf16); int8 is CPU
/// only.
void require_precision_support(Precision precision, const torch::Device& device);

}  // namespace nmt
