#pragma once
// Arithmetic precision of the matrix products. fp32 is the default and exact; bf16 runs
// the Linear layers' GEMMs in bfloat16 (8-bit mantissa) with fp32 accumulation inside
// oneDNN, while embeddings, layer norms, attention, softmax and the loss stay fp32.
//  - Inference (Seq2SeqModel::set_inference_precision): weights are converted once.
//  - Training (Bf16ComputeScope): fp32 master weights; each forward casts them, and
//    autograd casts the gradients back, so the optimiser updates fp32 parameters.
//    The RNN families too, for their Linear layers (those of the attention decoder are
//    cast again at every time step; a cast cache would sum the steps' gradients in bf16).
//    The attention decoder's GRU cells too (gru_cell_step). What stays fp32 in
//    training: the nn::GRU layers (the encoders, the GRU family's decoder).
// Only where the CPU multiplies bf16 natively (AVX512-BF16); elsewhere oneDNN emulates
// it, slower than fp32, so it is refused (require_precision_support).
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include <string>
#include <vector>

namespace nmt {

enum class Precision { fp32, bf16, int8 };

/// The --precision help text the tools share.
inline constexpr const char* kPrecisionHelp =
    "fp32 (default, exact); bf16: matrix products in bfloat16 (needs AVX512-BF16); int8: dynamic "
    "int8 Linear layers (AVX512-VNNI: ~1.5x fp32's beam-5 speed; AVX2: ~1.15x). Transformer only; "
    "speed and BLEU of each in bench/RESULTS.md";

/// "fp32" / "bf16" / "int8"; anything else throws nmt::Error listing them.
Precision parse_precision(const std::string& name);
std::string precision_name(Precision precision);
std::vector<std::string> precision_names();

/// Whether `precision` runs natively on `device` (what require_precision_support checks).
bool precision_supported(Precision precision, const torch::Device& device);

/// train.precision: "fp32", "bf16" (checked: require_precision_support) or "auto": bf16
/// on a CPU that multiplies bf16 natively, fp32 otherwise (any family: bf16 applies to
/// the products that go through apply_linear). int8 is for inference only (an error here).
Precision resolve_training_precision(const std::string& name, const torch::Device& device);

/// Throws nmt::Error when `precision` would be slow or unsupported on `device` (a CPU
/// without AVX512-BF16 for bf16, without AVX2 or oneDNN's int8 GEMM for int8). CUDA:
/// bf16 is accepted unchecked (untested); int8 is CPU only.
void require_precision_support(Precision precision, const torch::Device& device);

/// While one is alive on this thread, linear_in_precision() computes fp32-weight
/// products in bf16 (mixed-precision training). Nests.
class Bf16ComputeScope {
 public:
  explicit Bf16ComputeScope(bool enabled = true);
  ~Bf16ComputeScope();
  Bf16ComputeScope(const Bf16ComputeScope&) = delete;
  Bf16ComputeScope& operator=(const Bf16ComputeScope&) = delete;

 private:
  bool previous_;
};

/// Whether linear_in_precision() computes a product with `weight` in bf16.
bool computes_in_bf16(const torch::Tensor& weight);

/// x W^T + b, the way the precision asks: in bf16 when the weight is stored in bf16
/// (converted for inference) or a Bf16ComputeScope is active; in int8 when the weight
/// is quantized (int8_linear.h); fp32 otherwise, through oneDNN at inference
/// (onednn_gemm.h). The result has x's dtype. x: [N, in] (2-D, so the bias goes
/// through the GEMM).
torch::Tensor linear_in_precision(const torch::Tensor& x, const torch::Tensor& weight,
                                  const torch::Tensor& bias);

/// linear_in_precision for any [..., in] input -> [..., out], through a single GEMM that
/// adds the bias. (LibTorch 1.13 runs a Linear on a 3-D input as matmul plus a separate
/// bias pass over the output; flattening to 2-D lets the GEMM add it.) Every model's
/// Linear layers go through here, so precision and the oneDNN path apply to all of them
/// (the nn::GRU layers of the encoders and of the GRU family's decoder do not: their
/// products stay inside LibTorch).
torch::Tensor apply_linear(torch::nn::Linear& linear, const torch::Tensor& x);
/// The same for a bare weight [out, in] and bias [out] (or undefined).
torch::Tensor apply_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace nmt
