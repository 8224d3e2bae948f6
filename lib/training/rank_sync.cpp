// What the ranks of a data-parallel run exchange besides the batches' gradients' sums.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "nmt/base/cli.h"
#include "nmt/base/error.h"
#include "nmt/base/library_versions.h"
#include "nmt/base/stable_hash.h"
#include "run.h"

namespace nmt::training_run {
namespace {

std::string hex_digits(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// "train.learning_rate 0.0005 (rank 0: 0.001)" for each config key that differs (the first 5).
std::string differing_config_keys(const std::string& mine, const std::string& reference) {
  const auto differences = differing_keys(nlohmann::json::parse(reference), nlohmann::json::parse(mine));
  std::string words;
  for (size_t i = 0; i < std::min<size_t>(differences.size(), 5); ++i)
    words += (words.empty() ? "" : ", ") + differences[i].key + " " + differences[i].second + " (rank 0: " +
             differences[i].first + ")";
  if (differences.size() > 5) words += " and " + std::to_string(differences.size() - 5) + " more";
  return words.empty() ? std::string("another config") : "another config: " + words;
}

}  // namespace

// A distributed run goes wrong silently when the ranks train on different data or with
// different programs: compare all of it before the first step, then give every rank rank
// 0's parameters.
void TrainingRun::synchronise_ranks() {
  auto& group = *group_;
  if (group.world_size() == 1) return;
  const Fingerprint fingerprint = {
      {"config", config_to_json(config_).dump()},
      {"tokenizers", hex_digits(stable_hash(source_tokenizer_->serialized() + target_tokenizer_->serialized()))},
      {"training corpus", std::to_string(train_->size()) + " pairs, ids " + hex_digits(train_->ids_checksum())},
      {"program", "nmt " + cli::project_version() + ", " + library_versions()}};
  group.check_fingerprints(fingerprint, [](const std::string& item, const std::string& mine, const std::string& reference) {
    if (item == "config") return differing_config_keys(mine, reference);
    return "another " + item + " (" + mine + "; rank 0: " + reference + ")";
  });
  {
    torch::NoGradGuard no_grad;
    auto tensors = model_->parameters();
    for (const auto& buffer : model_->buffers()) tensors.push_back(buffer);
    group.broadcast(tensors);
  }
  // Different dropout masks on every rank (rank 0 keeps the single-process stream).
  if (!group.is_main())
    torch::manual_seed(static_cast<uint64_t>(config_.train.seed) + 7919ULL * group.rank() +
                       static_cast<uint64_t>(state_.step));
  // Behind backward on Gloo; NCCL's collectives on the backward's CUDA streams are not done yet.
  const bool overlap = config_.train.overlap_allreduce && group.backend() == DistributedBackend::gloo;
  const bool fp16_wire = config_.train.allreduce_precision == "fp16";
  if (fp16_wire && !overlap)
    throw Error("train.allreduce_precision fp16 needs the gradients summed during backward (train.overlap_allreduce "
                "true, on Gloo); this run sums them after backward on " + backend_name(group.backend()));
  if (overlap) {
    const auto bucket_bytes = std::max<int64_t>(1, std::llround(config_.train.allreduce_bucket_mb * (1 << 20)));
    overlapped_sum_ = std::make_unique<OverlappedGradientSum>(group, model_->parameters(), bucket_bytes,
                                                              fp16_wire ? GradientWire::fp16 : GradientWire::fp32);
  }
  log_->message("distributed: " + std::to_string(group.world_size()) + " ranks (" + backend_name(group.backend()) +
                ", gradients summed " + (overlap ? "during" : "after") + " backward" +
                (fp16_wire ? ", sent as fp16" : "") + "); an update covers " +
                   std::to_string(group.world_size()) + " x " + std::to_string(config_.train.accumulate) +
                   " batches of ~" + std::to_string(config_.train.batch_tokens) + " tokens");
}

// Only rank 0 validates, but the plateau schedule reacts to validations and every rank
// must step with the same learning rate: everyone takes rank 0's schedule state.
void TrainingRun::share_validation_outcome() {
  if (group_->world_size() == 1) return;
  group_->wait_for_main();
  auto state = torch::tensor(state_.validation_outcome(), torch::kFloat64)
                   .to(group_->device());  // NCCL moves only device memory
  group_->broadcast({state});
  const auto on_host = state.cpu();
  state_.take_validation_outcome(
      std::vector<double>(on_host.data_ptr<double>(), on_host.data_ptr<double>() + on_host.numel()));
}

// Sums the gradients of all ranks. A rank without a batch in this update contributes zeros.
// The time it waits is reported (gradient_sum_wait_share in train.jsonl): with the sums
// overlapped, what backward did not hide.
void TrainingRun::sum_gradients() {
  if (group_->world_size() == 1) return;
  const auto started = std::chrono::steady_clock::now();
  if (overlapped_sum_) {
    overlapped_sum_->finish();
  } else {
    std::vector<torch::Tensor> gradients;
    for (auto& parameter : model_->parameters()) {
      if (!parameter.grad().defined()) parameter.mutable_grad() = torch::zeros_like(parameter);
      gradients.push_back(parameter.grad());
    }
    group_->sum(gradients);
  }
  gradient_sum_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace nmt::training_run
