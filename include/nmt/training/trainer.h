#pragma once
// nmt-train's engine: token-batched training with label smoothing, Adam and a
// schedule; periodic validation (loss, perplexity, greedy BLEU); atomic checkpoints
// `last` (resumable) and `best`; early stopping; clean stop on SIGINT/SIGTERM;
// data-parallel over several processes (see distributed.h).
#include <functional>
#include <optional>
#include <string>

#include "nmt/base/config.h"
#include "nmt/training/distributed.h"
#include "nmt/models/model.h"

namespace nmt {

struct TrainerOptions {
  Config config;                        ///< effective config (file + flags)
  std::string train_source, train_target;  ///< raw text, prepared into data_cache on first use
  std::string train_data;                  ///< a prepared corpus (nmt-prepare) instead of the raw pair
  std::string valid_source, valid_target;
  /// Where raw text is prepared and found again on later starts; "" = MODEL_DIR/data-cache.
  std::string data_cache;
  int prepare_threads = 1;                 ///< threads that tokenize when preparing
  std::string source_spm, target_spm;   ///< may be empty when resuming
  std::string model_dir;
  std::string device = "cpu";           ///< cpu | cuda
  bool resume = false;                  ///< continue from DIR/last.pt (also done when it exists)
  /// Fine-tuning: start from this checkpoint's weights, model section and tokenizers, with
  /// this run's train section and a fresh optimizer, schedule, step count and best score.
  /// An error on a model directory that has last.pt (resume that run instead).
  std::string init_from;
  /// With init_from: the model section was given (--config, --arch, --set model.*), so it
  /// must equal the checkpoint's except model.dropout, which it sets.
  bool model_config_given = false;
  bool quiet = false;                   ///< no progress lines on stderr (tests)
  /// Seconds between progress lines on stderr: a step's line between the train.log_every
  /// ones when this long has passed without one, and a validation's (sentences translated).
  double progress_every_seconds = 10;
  /// Called on rank 0 once the model is on its training path, before the first step
  /// (nmt-train --verbose prints describe_compute with it).
  std::function<void(const Seq2SeqModel&)> on_model_ready;
  /// Limits given on the command line. On resume each one given replaces the stored one;
  /// the others keep their stored values. (On a fresh start `config` already has them.)
  std::optional<int64_t> max_steps, max_epochs;
  std::optional<double> max_time_minutes;
  /// A config was given (--config, --set, --arch, --seed). On resume it must equal the
  /// stored config apart from the limits: a change is an error naming the keys, never
  /// silently dropped. When false, resuming takes the stored config as it is.
  bool config_given = false;
  /// Data-parallel training: this process's place among world_size ranks. Only rank 0
  /// reads last.pt, validates, logs and writes the model directory.
  DistributedOptions distributed;
};

/// Summary of a finished run (for tests and the final log line).
struct TrainingResult {
  int64_t steps = 0;
  int64_t epochs_completed = 0;
  double last_train_loss = 0;
  double best_metric = 0;
  std::string stop_reason;
  ModelPtr model;  ///< the trained model in memory (on every rank)
};

/// Runs training to the end of the configured limits. Throws nmt::Error on bad input.
/// Nothing in the model directory changes before the config and the inputs have been
/// checked; the directory is locked (flock) for the run. A run already at its limits
/// takes no step and writes nothing.
TrainingResult train(const TrainerOptions& options);

}  // namespace nmt
