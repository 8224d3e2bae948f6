#pragma once
// Adam's update in one pass over each parameter. torch::optim::Adam's step reads and writes
// parameter-sized tensors about twenty times per parameter (mul_, add_, mul_, addcmul_,
// sqrt, div, add_, addcdiv_, two temporaries); gradient clipping (norm, then mul_) and
// zeroing the gradients (zero_, then backward's add into the zeros) add six more. For the
// Transformer preset's 7.6 M parameters that is ~0.6 GB of memory traffic per update.
// Here: one read of the gradients for the clipping norm, one pass that reads parameter,
// gradient and both moments and writes parameter and moments, and gradients dropped
// instead of zeroed.
//
// The state is Adam's own (step count, exp_avg, exp_avg_sq under the keys Adam::load
// gives), and save/load are Adam's: checkpoints written with either optimizer resume
// with the other. The arithmetic is Adam's in the same order; results differ from
// LibTorch's only by rounding (its vectorised kernels fuse some multiply-adds).
#include <torch/optim/adam.h>

#include <type_traits>
#include <utility>
#include <vector>

namespace nmt {

/// The type of the key under which a LibTorch optimizer keeps a parameter's state: a
/// string in LibTorch 1.x, the TensorImpl's address in 2.x (read off the state map).
using OptimizerStateKey =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

/// The key torch::optim::Adam's step and load use for `parameter`'s state.
OptimizerStateKey optimizer_state_key(const torch::Tensor& parameter);

class FusedAdam : public torch::optim::Adam {
 public:
  /// Takes the one-pass path when every parameter is a dense fp32 CPU tensor and amsgrad
  /// is off (decided here, once); otherwise each update is LibTorch's step.
  FusedAdam(const std::vector<torch::Tensor>& parameters, torch::optim::AdamOptions options);

  /// One update from the gradients multiplied by `gradient_scale` (clipping_factor). The
  /// one-pass path leaves the gradients as they are; the other scales them in place.
  void update(double gradient_scale);

  /// update(1), for Optimizer's interface. A closure is refused (nothing here needs one).
  torch::Tensor step(LossClosure closure = nullptr) override;

  bool one_pass() const { return one_pass_; }

  /// Adam::load, but the saved state is matched to the parameters by the saved keys as
  /// text. LibTorch 1.x writes those keys as hex addresses ("0x55d0..."), and 2.x's load
  /// reads them back as decimal numbers, so every one of them becomes 0 and the moments
  /// land on the wrong parameters: with this, a checkpoint of either stack resumes on both.
  void load(torch::serialize::InputArchive& archive) override;

 private:
  torch::optim::AdamParamState& state_of(const torch::Tensor& parameter);
  void one_pass_update(torch::Tensor& parameter, const torch::optim::AdamOptions& options, double gradient_scale);

  bool one_pass_;
};

/// What torch::nn::utils::clip_grad_norm_(parameters, max_norm) multiplies the gradients
/// by: min(1, max_norm / (norm + 1e-6)), norm the L2 norm of all defined gradients together.
double clipping_factor(const std::vector<torch::Tensor>& parameters, double max_norm);

/// Drops every parameter's gradient instead of zeroing it: the next backward stores its
/// gradient tensor rather than adding it to zeros.
void release_gradients(const std::vector<torch::Tensor>& parameters);

}  // namespace nmt
