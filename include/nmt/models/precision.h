#pragma once
// Arithmetic precision of the matrix products. fp32 is the default and exact; bf16 runs
// the Linear layers' GEMMs in bfloat16 (8-bit mantissa) with fp32 accumulation inside
// oneDNN, while embeddings, layer norms, attention, softmax and the loss stay fp32.
//  - Inference (Seq2SeqModel::set_inference_precision): weights are converted once.
//  - Training (Bf16ComputeScope): fp32 master weights; each forward casts them, and
//    autograd casts the gradients back, so the optimiser updates fp32 parameters.
// Only where the CPU multiplies bf16 natively (AVX512-BF16); elsewhere oneDNN emulates
// it, slower than fp32, so it is refused (require_precision_support).
#include <torch/types.h>

#include <string>
#include <vector>

namespace nmt {

enum class Precision { fp32, bf16 };

/// The --precision help text the tools share.
inline constexpr const char* kPrecisionHelp =
    "fp32 (default, exact) or bf16: matrix products in bfloat16 (Transformer only; needs a CPU "
    "with AVX512-BF16); measured 1.7x faster beam search for a BLEU change within 0.1 (bench/RESULTS.md)";

/// "fp32" / "bf16"; anything else throws nmt::Error listing both.
Precision parse_precision(const std::string& name);
std::string precision_name(Precision precision);
std::vector<std::string> precision_names();

/// Whether `precision` runs natively on `device` (what require_precision_support checks).
bool precision_supported(Precision precision, const torch::Device& device);

/// train.precision: "fp32", "bf16" (checked: require_precision_support) or "auto": bf16
/// for the Transformer on a CPU that multiplies bf16 natively, fp32 otherwise.
Precision resolve_training_precision(const std::string& name, const std::string& arch,
                                     const torch::Device& device);

/// Throws nmt::Error when `precision` would be slow or unsupported on `device` (a CPU
/// without AVX512-BF16). CUDA is accepted unchecked (untested).
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
/// (converted for inference) or a Bf16ComputeScope is active; fp32 otherwise. The
/// result has x's dtype. x: [N, in] (2-D, so the bias goes through addmm).
torch::Tensor linear_in_precision(const torch::Tensor& x, const torch::Tensor& weight,
                                  const torch::Tensor& bias);

}  // namespace nmt
