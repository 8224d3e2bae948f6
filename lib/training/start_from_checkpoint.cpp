// Fine-tuning (nmt-train --init-from): a new run whose model starts as a trained one.
// What carries over is what defines the model (architecture, sizes, tokenizers, weights);
// what describes a run (optimizer moments, schedule position, step count, best score)
// starts afresh, and the train section comes from this run's config as for any new run.
#include <torch/torch.h>

#include "nmt/base/error.h"
#include "nmt/models/registry.h"
#include "nmt/training/config_check.h"
#include "run.h"

namespace nmt::training_run {
namespace {

// Architecture and sizes must be the checkpoint's (its weights would not fit others);
// dropout is a training choice and may change. Vocabulary sizes come from the tokenizers.
void refuse_model_changes(const ModelConfig& stored, ModelConfig given, const std::string& checkpoint) {
  given.source_vocab = stored.source_vocab;
  given.target_vocab = stored.target_vocab;
  given.dropout = stored.dropout;
  Config stored_config, given_config;
  stored_config.model = stored;
  given_config.model = given;
  const auto list = config_differences(stored_config, given_config);
  if (list.empty()) return;
  throw Error("--init-from " + checkpoint + ": the model section differs from the checkpoint's: " + list +
              " (fine-tuning keeps the architecture, sizes and tokenizers; only model.dropout may change)");
}

// Same architecture, so the same names and shapes: every parameter and buffer is copied.
void copy_weights(torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  auto source_parameters = from.named_parameters();
  for (auto& target : to.named_parameters()) target.value().copy_(source_parameters[target.key()]);
  auto source_buffers = from.named_buffers();
  for (auto& target : to.named_buffers()) target.value().copy_(source_buffers[target.key()]);
}

}  // namespace

void TrainingRun::start_from_checkpoint() {
  const auto& path = options_.init_from;
  auto archive = checkpoint_archive(checkpoint_bytes_on_every_rank(path), path);
  auto loaded = load_model(archive, path, device_);
  refuse_other_tokenizers(options_, loaded, path);
  const auto& stored = loaded.config.model;
  if (options_.model_config_given) refuse_model_changes(stored, options_.config.model, path);
  config_ = options_.config;
  const double dropout = options_.model_config_given ? config_.model.dropout : stored.dropout;
  config_.model = stored;
  config_.model.dropout = dropout;
  check_config(config_);
  source_tokenizer_ = loaded.source_tokenizer;
  target_tokenizer_ = loaded.target_tokenizer;
  torch::manual_seed(static_cast<uint64_t>(config_.train.seed));
  model_ = build_model(config_.model);  // with this run's dropout
  model_->to(device_);
  copy_weights(*loaded.model, *model_);
  model_->train();
  make_optimizer();
  log_->message("fine-tuning from " + path + (loaded.step >= 0 ? " (step " + std::to_string(loaded.step) + " of its run)" : "") +
                   ": its weights and tokenizers; a fresh optimizer, schedule and best score");
}

}  // namespace nmt::training_run
