#include "nmt/training/distributed.h"

// Debian builds LibTorch with Gloo; its header is guarded by this macro.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "nmt_torch_build.h"
// A LibTorch built with CUDA has NCCL too (CMakeLists.txt checks); its header is guarded
// by this macro as Gloo's is.
#if NMT_WITH_NCCL
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL
#endif
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "nmt/base/error.h"

namespace nmt {
namespace {

std::chrono::milliseconds as_duration(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// LibTorch 2.x's TCPStore serves through libuv by default, which Debian 13's LibTorch is
// built without ("use_libuv was requested but PyTorch was build without libuv support");
// its one-thread server, LibTorch 1.x's only one, serves a few ranks just as well. The
// field is set only where this LibTorch has it.
template <typename Options>
auto without_libuv(Options& options, int) -> decltype(options.useLibUV = false, void()) {
  options.useLibUV = false;
}
template <typename Options>
void without_libuv(Options&, long) {}

// c10d's errors carry a C++ backtrace that means nothing to a user.
std::string detail_of(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

// Gloo reports a dead peer as a c10::Error deep inside a worker thread; say what it means.
[[noreturn]] void fail(const DistributedOptions& options, const std::string& operation, const std::exception& e) {
  throw Error("distributed training: rank " + std::to_string(options.rank) + " of " +
              std::to_string(options.world_size) + " failed in " + operation +
              " (another rank died, stopped answering within " +
              std::to_string(static_cast<int64_t>(options.timeout_seconds)) + " s, or never joined): " + detail_of(e));
}

}  // namespace

bool nccl_available() { return NMT_WITH_NCCL != 0; }

DistributedBackend distributed_backend_for(const c10::Device& device) {
  if (device.is_cpu()) return DistributedBackend::gloo;
  if (!nccl_available())
    throw Error("distributed training on " + device.str() +
                " needs NCCL, and this LibTorch has none (Debian's is built without CUDA): train on the CPU "
                "(Gloo) or build against a LibTorch with CUDA");
  return DistributedBackend::nccl;
}

std::string backend_name(DistributedBackend backend) { return backend == DistributedBackend::nccl ? "NCCL" : "Gloo"; }

// The group's collectives, by backend. Each is its own type: LibTorch 1.x derives both from
// c10d::ProcessGroup, 2.x from c10d::Backend, so no common base is named here.
struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#if NMT_WITH_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif

  // `call` on whichever group this run joined.
  template <typename Call>
  c10::intrusive_ptr<c10d::Work> run(Call call) {
#if NMT_WITH_NCCL
    if (nccl) return call(*nccl);
#endif
    return call(*gloo);
  }
};

namespace {

c10::intrusive_ptr<c10d::ProcessGroupGloo> join_gloo(const DistributedOptions& options,
                                                     const c10::intrusive_ptr<c10d::Store>& store) {
  auto group_options = c10d::ProcessGroupGloo::Options::create(as_duration(options.timeout_seconds));
  // GLOO_SOCKET_IFNAME picks the network interface, as in PyTorch; otherwise the
  // address this machine's hostname resolves to (loopback when it resolves to none).
  const char* named = std::getenv("GLOO_SOCKET_IFNAME");
  const std::string interface = named == nullptr ? "" : named;
  group_options->devices = {interface.empty() ? c10d::ProcessGroupGloo::createDefaultDevice()
                                              : c10d::ProcessGroupGloo::createDeviceForInterface(interface)};
  group_options->threads = 2;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, options.rank, options.world_size, group_options);
}

#if NMT_WITH_NCCL
// One GPU per rank: the rank's device is its local rank, made current before NCCL's
// communicator is created so that it and every collective use that GPU.
c10::intrusive_ptr<c10d::ProcessGroupNCCL> join_nccl(const DistributedOptions& options,
                                                     const c10::intrusive_ptr<c10d::Store>& store) {
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(options.local_rank));
  auto group_options = c10d::ProcessGroupNCCL::Options::create();
  group_options->timeout = as_duration(options.timeout_seconds);
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, options.rank, options.world_size, group_options);
}
#endif

// TCPStore's client waits without end for a peer that accepts its connection and never
// answers (another program listening on the port): the wait is bounded here, on a thread
// of its own that is left behind if it never returns (the run ends with the error anyway).
c10::intrusive_ptr<c10d::Store> open_store(const DistributedOptions& options, const c10d::TCPStoreOptions& store_options) {
  using Store = c10::intrusive_ptr<c10d::Store>;
  auto opened = std::make_shared<std::promise<Store>>();
  auto future = opened->get_future();
  std::thread([opened, address = options.master_addr, store_options] {
    try {
      opened->set_value(c10::make_intrusive<c10d::TCPStore>(address, store_options));
    } catch (...) {
      opened->set_exception(std::current_exception());
    }
  }).detach();
  const auto patience = as_duration(options.timeout_seconds) + std::chrono::seconds(5);
  if (future.wait_for(patience) != std::future_status::ready)
    throw Error("nothing at " + options.master_addr + ":" + std::to_string(options.master_port) +
                " answered as a rendezvous store (another program listening on that port?)");
  return future.get();
}

// Gloo sends to its peers with writev, which raises SIGPIPE when the peer's socket is gone;
// its default action ends this rank at once, silently, before Gloo can report the dead
// peer (a killed rank's partner died so, without a word, in some runs). Ignored, the write
// fails with EPIPE, Gloo throws, and the rank stops with fail()'s error. Python ignores
// SIGPIPE from the start, which is why PyTorch's own launches never meet this.
void let_dead_peers_fail_writes() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace

ProcessGroup::ProcessGroup(const DistributedOptions& options, DistributedBackend backend)
    : options_(options), backend_(backend) {
  options_.validate();
  if (!options_.enabled()) return;
  if (backend_ == DistributedBackend::nccl && !nccl_available())
    throw Error("distributed training: NCCL was asked for, and this LibTorch has none");
  let_dead_peers_fail_writes();
  impl_ = std::make_unique<Impl>();
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(options_.master_port);
    store_options.isServer = options_.rank == 0;
    store_options.numWorkers = options_.world_size;
    store_options.waitWorkers = true;
    store_options.timeout = as_duration(options_.timeout_seconds);
    without_libuv(store_options, 0);
    impl_->store = open_store(options_, store_options);
#if NMT_WITH_NCCL
    if (backend_ == DistributedBackend::nccl) impl_->nccl = join_nccl(options_, impl_->store);
#endif
    if (backend_ == DistributedBackend::gloo) impl_->gloo = join_gloo(options_, impl_->store);
  } catch (const std::exception& e) {
    throw Error("distributed training: rank " + std::to_string(options_.rank) + " of " +
                std::to_string(options_.world_size) + " could not join " + options_.master_addr + ":" +
                std::to_string(options_.master_port) + " within " +
                std::to_string(static_cast<int64_t>(options_.timeout_seconds)) +
                " s (a rank never joined, the port is taken, or the address is wrong): " + detail_of(e));
  }
}

ProcessGroup::~ProcessGroup() = default;

c10::Device ProcessGroup::device() const {
  if (backend_ == DistributedBackend::gloo) return c10::Device(c10::kCPU);
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(options_.local_rank));
}

namespace {

// Packs tensors of one dtype into flat buckets, runs `collective` on each bucket (all
// in flight at once), then copies the results back.
template <typename Collective>
void bucketed(const DistributedOptions& options, const std::string& operation,
              const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes, Collective collective) {
  std::vector<std::vector<torch::Tensor>> buckets;
  int64_t bytes = bucket_bytes;
  for (const auto& tensor : tensors) {
    const int64_t size = tensor.numel() * static_cast<int64_t>(tensor.element_size());
    const bool same_type = !buckets.empty() && buckets.back().front().scalar_type() == tensor.scalar_type();
    if (!same_type || bytes + size > bucket_bytes) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(tensor);
    bytes += size;
  }
  std::vector<torch::Tensor> flats;
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  try {
    for (const auto& bucket : buckets) {
      std::vector<torch::Tensor> views;
      for (const auto& tensor : bucket) views.push_back(tensor.reshape({-1}));
      flats.push_back(torch::cat(views));
      std::vector<torch::Tensor> argument{flats.back()};
      works.push_back(collective(argument));
    }
    for (auto& work : works) work->wait();
  } catch (const std::exception& e) {
    fail(options, operation, e);
  }
  for (size_t b = 0; b < buckets.size(); ++b) {
    int64_t offset = 0;
    for (const auto& tensor : buckets[b]) {
      tensor.copy_(flats[b].narrow(0, offset, tensor.numel()).view_as(tensor));
      offset += tensor.numel();
    }
  }
}

}  // namespace

void ProcessGroup::broadcast(const std::vector<torch::Tensor>& tensors) {
  if (!impl_ || tensors.empty()) return;
  torch::NoGradGuard no_grad;  // parameters are overwritten in place
  bucketed(options_, "broadcast", tensors, 32 << 20, [&](std::vector<torch::Tensor>& flat) {
    return impl_->run([&](auto& group) { return group.broadcast(flat, c10d::BroadcastOptions{}); });
  });
}

void ProcessGroup::sum(const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes) {
  if (!impl_ || tensors.empty()) return;
  bucketed(options_, "all-reduce", tensors, bucket_bytes, [&](std::vector<torch::Tensor>& flat) {
    return impl_->run([&](auto& group) { return group.allreduce(flat, c10d::AllreduceOptions{}); });
  });
}

std::function<void()> ProcessGroup::start_sum(torch::Tensor flat) {
  if (!impl_) return [] {};
  std::vector<torch::Tensor> argument{std::move(flat)};
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = impl_->run([&](auto& group) { return group.allreduce(argument, c10d::AllreduceOptions{}); });
  } catch (const std::exception& e) {
    fail(options_, "all-reduce", e);
  }
  return [work, options = options_] {
    try {
      work->wait();
    } catch (const std::exception& e) {
      fail(options, "all-reduce", e);
    }
  };
}

double ProcessGroup::sum(double value) {
  if (!impl_) return value;
  auto tensor = torch::tensor({value}, torch::kFloat64).to(device());
  sum({tensor});
  return tensor.item<double>();
}

int64_t ProcessGroup::max(int64_t value) {
  if (!impl_) return value;
  auto tensor = torch::tensor({value}, torch::kInt64).to(device());
  std::vector<torch::Tensor> argument{tensor};
  c10d::AllreduceOptions reduce;
  reduce.reduceOp = c10d::ReduceOp::MAX;
  try {
    impl_->run([&](auto& group) { return group.allreduce(argument, reduce); })->wait();
  } catch (const std::exception& e) {
    fail(options_, "all-reduce", e);
  }
  return tensor.item<int64_t>();
}

std::string ProcessGroup::broadcast_bytes(const std::string& bytes) {
  if (!impl_) return bytes;
  auto size = torch::tensor({static_cast<int64_t>(bytes.size())}, torch::kInt64).to(device());
  broadcast({size});
  auto host = torch::zeros({size.item<int64_t>()}, torch::kUInt8);
  if (is_main()) std::memcpy(host.data_ptr(), bytes.data(), bytes.size());
  // NCCL moves only device memory: the bytes travel through the rank's GPU there.
  auto data = host.to(device());
  if (data.numel() > 0) broadcast({data});
  host = data.to(torch::kCPU);
  return std::string(static_cast<const char*>(host.data_ptr()), static_cast<size_t>(host.numel()));
}

namespace {

std::string shortened(const std::string& text) { return text.size() <= 60 ? text : text.substr(0, 57) + "..."; }

std::vector<uint8_t> as_bytes(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

}  // namespace

void ProcessGroup::check_fingerprints(const Fingerprint& mine, const DescribeDifference& describe) {
  if (!impl_) return;
  const auto key = [](int rank) { return "nmt/fingerprint/" + std::to_string(rank); };
  std::vector<Fingerprint> all(static_cast<size_t>(options_.world_size));
  try {
    impl_->store->set(key(options_.rank), as_bytes(nlohmann::json(mine).dump()));
    for (int rank = 0; rank < options_.world_size; ++rank) {
      const auto bytes = impl_->store->get(key(rank));  // waits for that rank, up to the timeout
      all[static_cast<size_t>(rank)] = nlohmann::json::parse(bytes.begin(), bytes.end()).get<Fingerprint>();
    }
  } catch (const std::exception& e) {
    fail(options_, "comparing the ranks' config, data and program", e);
  }
  // Every rank sees every fingerprint, so every rank reaches the same verdict and words it the same.
  std::string differences;
  const auto& reference = all.front();
  for (size_t rank = 1; rank < all.size(); ++rank) {
    for (size_t item = 0; item < reference.size(); ++item) {
      const auto& [name, expected] = reference[item];
      const std::string got = item < all[rank].size() ? all[rank][item].second : "(nothing)";
      if (got == expected) continue;
      differences += (differences.empty() ? "" : "; ") + std::string("rank ") + std::to_string(rank) + " has " +
                     (describe ? describe(name, got, expected)
                               : "another " + name + " (" + shortened(got) + " there, " + shortened(expected) +
                                     " on rank 0)");
    }
  }
  if (!differences.empty())
    throw Error("distributed training: the ranks would not train the same model: " + differences +
                ". Every rank needs the same config, corpus, tokenizers and program");
}

void ProcessGroup::wait_for_main() {
  if (!impl_) return;
  c10d::BarrierOptions options;
  // Rank 0 itself waits for the others with the usual timeout (one may hang).
  if (!is_main()) options.timeout = as_duration(options_.timeout_seconds * kValidationWaitFactor);
  try {
    impl_->run([&](auto& group) { return group.barrier(options); })->wait();
  } catch (const std::exception& e) {
    fail(options_, is_main() ? "barrier after validation" : "waiting for rank 0 to validate and save", e);
  }
}

}  // namespace nmt
