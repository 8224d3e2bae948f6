// What the ranks of a data-parallel run exchange besides the batches' gradients' sums.
#include "nmt/base/error.h"
#include "nmt/base/stable_hash.h"
#include "run.h"

namespace nmt::training_run {
// A distributed run goes wrong silently when the ranks train on different data; check
// what can be checked, then give every rank rank 0's parameters.
void synchronise_ranks(Run& run) {
  auto& group = *run.group;
  if (group.world_size() == 1) return;
  group.check_same(static_cast<int64_t>(stable_hash(config_to_json(run.config).dump())), "the config");
  group.check_same(static_cast<int64_t>(stable_hash(run.source_tokenizer->serialized() +
                                                    run.target_tokenizer->serialized())), "the tokenizers");
  group.check_same(static_cast<int64_t>(run.train->size()), "the number of training pairs");
  group.check_same(static_cast<int64_t>(run.train->ids_checksum()), "the training corpus (its ids differ)");
  {
    torch::NoGradGuard no_grad;
    auto tensors = run.model->parameters();
    for (const auto& buffer : run.model->buffers()) tensors.push_back(buffer);
    group.broadcast(tensors);
  }
  // Different dropout masks on every rank (rank 0 keeps the single-process stream).
  if (!group.is_main())
    torch::manual_seed(static_cast<uint64_t>(run.config.train.seed) + 7919ULL * group.rank() +
                       static_cast<uint64_t>(run.progress.step));
  run.log->message("distributed: " + std::to_string(group.world_size()) + " ranks (Gloo); an update covers " +
                   std::to_string(group.world_size()) + " x " + std::to_string(run.config.train.accumulate) +
                   " batches of ~" + std::to_string(run.config.train.batch_tokens) + " tokens");
}

// Only rank 0 validates, but the plateau schedule reacts to validations and every rank
// must step with the same learning rate: everyone takes rank 0's schedule state.
void share_validation_outcome(Run& run) {
  if (run.group->world_size() == 1) return;
  run.group->wait_for_main();
  auto& schedule = *run.schedule;
  auto state = torch::tensor({schedule.plateau_scale, static_cast<double>(schedule.stalled_validations)},
                             torch::kFloat64);
  run.group->broadcast({state});
  schedule.plateau_scale = state[0].item<double>();
  schedule.stalled_validations = static_cast<int64_t>(state[1].item<double>());
}

// Sums the gradients of all ranks. A rank without a batch in this update contributes zeros.
void sum_gradients(Run& run) {
  if (run.group->world_size() == 1) return;
  std::vector<torch::Tensor> gradients;
  for (auto& parameter : run.model->parameters()) {
    if (!parameter.grad().defined()) parameter.mutable_grad() = torch::zeros_like(parameter);
    gradients.push_back(parameter.grad());
  }
  run.group->sum(gradients);
}

}  // namespace nmt::training_run
