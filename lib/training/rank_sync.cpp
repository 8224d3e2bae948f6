// What the ranks of a data-parallel run exchange besides the batches' gradients' sums.
#include "nmt/base/error.h"
#include "nmt/base/stable_hash.h"
#include "run.h"

namespace nmt::training_run {
// A distributed run goes wrong silently when the ranks train on different data; check
// what can be checked, then give every rank rank 0's parameters.
void TrainingRun::synchronise_ranks() {
  auto& group = *group_;
  if (group.world_size() == 1) return;
  group.check_same(static_cast<int64_t>(stable_hash(config_to_json(config_).dump())), "the config");
  group.check_same(static_cast<int64_t>(stable_hash(source_tokenizer_->serialized() +
                                                    target_tokenizer_->serialized())), "the tokenizers");
  group.check_same(static_cast<int64_t>(train_->size()), "the number of training pairs");
  group.check_same(static_cast<int64_t>(train_->ids_checksum()), "the training corpus (its ids differ)");
  {
    torch::NoGradGuard no_grad;
    auto tensors = model_->parameters();
    for (const auto& buffer : model_->buffers()) tensors.push_back(buffer);
    group.broadcast(tensors);
  }
  // Different dropout masks on every rank (rank 0 keeps the single-process stream).
  if (!group.is_main())
    torch::manual_seed(static_cast<uint64_t>(config_.train.seed) + 7919ULL * group.rank() +
                       static_cast<uint64_t>(progress_.step));
  log_->message("distributed: " + std::to_string(group.world_size()) + " ranks (" + backend_name(group.backend()) +
                "); an update covers " +
                   std::to_string(group.world_size()) + " x " + std::to_string(config_.train.accumulate) +
                   " batches of ~" + std::to_string(config_.train.batch_tokens) + " tokens");
}

// Only rank 0 validates, but the plateau schedule reacts to validations and every rank
// must step with the same learning rate: everyone takes rank 0's schedule state.
void TrainingRun::share_validation_outcome() {
  if (group_->world_size() == 1) return;
  group_->wait_for_main();
  auto& schedule = *learning_rate_;
  auto state = torch::tensor({schedule.plateau_scale, static_cast<double>(schedule.stalled_validations)},
                             torch::kFloat64)
                   .to(group_->device());  // NCCL moves only device memory
  group_->broadcast({state});
  schedule.plateau_scale = state[0].item<double>();
  schedule.stalled_validations = static_cast<int64_t>(state[1].item<double>());
}

// Sums the gradients of all ranks. A rank without a batch in this update contributes zeros.
void TrainingRun::sum_gradients() {
  if (group_->world_size() == 1) return;
  std::vector<torch::Tensor> gradients;
  for (auto& parameter : model_->parameters()) {
    if (!parameter.grad().defined()) parameter.mutable_grad() = torch::zeros_like(parameter);
    gradients.push_back(parameter.grad());
  }
  group_->sum(gradients);
}

}  // namespace nmt::training_run
