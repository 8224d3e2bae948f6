#pragma once
// Data-parallel training over several processes (and machines) with PyTorch's own
// distributed engine, c10d: a TCPStore for the rendezvous and ProcessGroupGloo (CPU) or,
// where LibTorch has it, ProcessGroupNCCL (CUDA, one GPU per rank) for the collectives. Every rank holds a full model replica; gradients are summed with
// bucketed all-reduces so that all replicas take the same optimizer step.
#include <c10/core/Device.h>
#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nmt {

/// How much longer than a collective the other ranks wait for rank 0's validation and save.
constexpr double kValidationWaitFactor = 10;

/// Where this process sits in a distributed run. world_size 1 means a single process.
struct DistributedOptions {
  int world_size = 1;
  int rank = 0;
  int local_rank = 0;                  ///< rank on this machine: its GPU's index on CUDA
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  double timeout_seconds = 600;        ///< a rank that never joins or stops answering fails the run after this

  bool enabled() const { return world_size > 1; }
  /// Throws nmt::Error naming the bad value.
  void validate() const;
};

/// Reads where this process sits from its launcher, over `defaults`: torchrun's variables
/// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, or else, under Slurm (srun), its
/// SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and the first host of SLURM_JOB_NODELIST as the
/// master address (MASTER_ADDR and MASTER_PORT still win where set). A bad value is an error
/// naming the variable.
DistributedOptions distributed_options_from_environment(DistributedOptions defaults = {});

/// The first host of a Slurm host list ("node[07-09,12],gpu3" -> "node07"). nmt::Error on a
/// list that is empty or malformed (an unclosed or empty bracket, a range without a number).
std::string first_slurm_host(const std::string& nodelist);

/// What a rank trains with, item by item: {"the config", its JSON}, {"the program", its
/// version}, ... Compared between the ranks before the first step.
using Fingerprint = std::vector<std::pair<std::string, std::string>>;

/// Words one difference for an error: (item, this rank's value, rank 0's value).
using DescribeDifference = std::function<std::string(const std::string&, const std::string&, const std::string&)>;

enum class DistributedBackend { gloo, nccl };

/// Whether this LibTorch has c10d's NCCL (built with CUDA: CMakeLists.txt decides).
bool nccl_available();

/// The backend for a model on `device`, decided once where training starts: Gloo on the
/// CPU, NCCL on CUDA. nmt::Error on CUDA without NCCL (Debian's LibTorch).
DistributedBackend distributed_backend_for(const c10::Device& device);

/// "Gloo" or "NCCL", as the run's log names it.
std::string backend_name(DistributedBackend backend);

/// The collectives training needs. With world_size 1 every call is a cheap no-op, so the
/// trainer has a single code path.
class ProcessGroup {
 public:
  /// Joins the group (blocks until all ranks arrive or the timeout passes). Gloo takes CPU
  /// tensors; NCCL takes tensors on this rank's GPU (cuda:local_rank), which it makes the
  /// current device.
  explicit ProcessGroup(const DistributedOptions& options, DistributedBackend backend = DistributedBackend::gloo);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return options_.rank; }
  int world_size() const { return options_.world_size; }
  bool is_main() const { return options_.rank == 0; }
  DistributedBackend backend() const { return backend_; }
  /// Where the tensors of collectives live: the CPU for Gloo, cuda:local_rank for NCCL.
  c10::Device device() const;

  /// Copies rank 0's tensors into everyone's, in place (bucketed).
  void broadcast(const std::vector<torch::Tensor>& tensors);
  /// Sums each tensor over all ranks, in place. Tensors are packed into flat buckets of
  /// about `bucket_bytes` (one all-reduce per bucket, all in flight together).
  void sum(const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes = 32 << 20);
  /// Starts summing `flat` over all ranks in place and returns at once; call the returned
  /// function before reading `flat` (it waits, and throws as sum() does). Every rank must
  /// start the same sums in the same order.
  std::function<void()> start_sum(torch::Tensor flat);
  double sum(double value);
  int64_t max(int64_t value);
  /// Rank 0's bytes on every rank.
  std::string broadcast_bytes(const std::string& bytes);
  /// Every rank's fingerprint through the rendezvous store, each compared with rank 0's:
  /// when any rank differs, every rank throws the same nmt::Error naming each rank that
  /// differs and in what (worded by `describe`; by default both values, shortened).
  void check_fingerprints(const Fingerprint& mine, const DescribeDifference& describe = {});
  /// A barrier where the ranks other than 0 wait kValidationWaitFactor x the timeout: they
  /// call it while rank 0 validates and saves, which takes longer than a collective. A
  /// rank that dies still fails it at once (its connections close); rank 0 keeps the timeout.
  void wait_for_main();

 private:
  struct Impl;
  DistributedOptions options_;
  DistributedBackend backend_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt
