#pragma once
// Private to lib/training: the all-reduce of a data-parallel update behind its last
// backward pass, as PyTorch's DDP does it. The parameters are split into buckets of about
// bucket_bytes in reverse order (the order backward reaches them); a hook on each parameter
// copies its final gradient (what was accumulated over the earlier micro-batches plus this
// one) into its bucket, and a bucket whose gradients are all there is summed over the ranks
// at once, asynchronously, while backward goes on. finish() sums what is left and waits.
//
// Hooks on the tensors, not c10d's Reducer: the Reducer's constructor changed between
// LibTorch 1.13 and 2.6, while a tensor hook is the same in both. The sums equal the after-backward all-reduce exactly: each element
// is the same float sum of the same ranks' values, whatever the buckets.
//
// On a slow link the buckets can travel as fp16 (GradientWire::fp16, half the bytes, as DDP's
// fp16 compression hook): see fp16_wire_scale() for how the range is kept. Every rank gets
// the same sum from the collective, so every rank makes the same choice for the next step.
//
// Buckets are started strictly in order (a ready bucket waits for the ones before it), so
// every rank starts the same collectives in the same order even when its gradients arrive
// in another; nothing else may be summed between arm() and finish(). The first update's
// buckets follow reverse registration; from the second on, the order that update's backward
// reached the parameters on rank 0 (training/gradient_buckets.h says why).
#include <torch/torch.h>

#include <functional>
#include <vector>

#include "nmt/training/distributed.h"

namespace nmt::training_run {

/// How float32 gradient buckets travel (train.allreduce_precision).
enum class GradientWire { fp32, fp16 };

/// The power of two a bucket is multiplied by before it travels as fp16, from the largest
/// magnitude in its previous sum: that magnitude lands at 2^12, 16x below fp16's largest
/// finite value (room for gradients that grow, and for one rank's share exceeding the sum),
/// and elements down to 2^-26 of it keep fp16's 11 significant bits (bf16 has 8). 0 where
/// there is no usable previous sum (the first update, all zeros, not finite): the bucket
/// then travels as fp32. A bucket whose fp16 sum overflows is summed again in fp32.
double fp16_wire_scale(double previous_max_magnitude);

class OverlappedGradientSum {
 public:
  /// bucket_bytes: gradients summed in one collective (train.allreduce_bucket_mb; its default
  /// is measured in bench/RESULTS.md, "Gradient sums over a 1 Gbit/s link").
  OverlappedGradientSum(ProcessGroup& group, std::vector<torch::Tensor> parameters, int64_t bucket_bytes,
                        GradientWire wire = GradientWire::fp32);
  ~OverlappedGradientSum();  ///< removes its hooks
  OverlappedGradientSum(const OverlappedGradientSum&) = delete;
  OverlappedGradientSum& operator=(const OverlappedGradientSum&) = delete;

  /// The next backward pass is the update's last on this rank: its gradients are summed as
  /// they become ready. (A rank without a batch in the update calls finish() alone.)
  void arm();
  /// Starts the buckets not started yet (in order; a gradient backward did not reach counts
  /// as what is accumulated, or zeros), waits for all, and writes the sums into the
  /// parameters' gradients.
  void finish();

 private:
  struct Bucket {
    std::vector<size_t> parameters;  ///< indices into parameters_, in bucket order
    std::vector<int64_t> offsets;    ///< of each in `flat`
    torch::Tensor flat;
    torch::Tensor on_wire;           ///< flat x wire_scale as fp16, while it travels that way
    double wire_scale = 0;           ///< from the previous sum; 0: travel as fp32
    size_t ready = 0;
    std::function<void()> wait;      ///< set once started
  };

  void build_buckets(const std::vector<size_t>& order);
  void learn_backward_order();
  void on_gradient(size_t parameter, const torch::Tensor& gradient);
  void start_ready_buckets();
  void start(Bucket& bucket);
  /// Waits for the bucket's sum and leaves it in bucket.flat (in fp32 again).
  void complete(Bucket& bucket);

  ProcessGroup& group_;
  const GradientWire wire_;
  const int64_t bucket_bytes_;
  std::vector<torch::Tensor> parameters_;
  std::vector<unsigned> hooks_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;     ///< per parameter
  std::vector<size_t> slot_in_bucket_;
  std::vector<bool> arrived_;         ///< per parameter, this update
  std::vector<size_t> arrivals_;      ///< until the order is learned: parameters as their gradients arrived
  bool order_learned_ = false;
  size_t next_to_start_ = 0;
  bool armed_ = false;
};

}  // namespace nmt::training_run
