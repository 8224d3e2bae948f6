#pragma once
// The state of one nmt-train run, shared by the files of the trainer: run_setup.cpp
// (fresh start, resume, data, checkpoints), rank_sync.cpp (what data-parallel ranks
// exchange) and trainer.cpp (the loop). Private to lib/training/.
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <vector>

#include "nmt/base/directory_lock.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/precision.h"
#include "nmt/text/corpus.h"
#include "nmt/text/prepared_corpus.h"
#include "nmt/text/tokenizer.h"
#include "nmt/training/distributed.h"
#include "nmt/training/fused_adam.h"
#include "nmt/training/schedule.h"
#include "nmt/training/trainer.h"
#include "nmt/training/training_log.h"
#include "nmt/training/validation.h"

namespace nmt::training_run {

// Everything that changes while training and must survive a resume.
struct Progress {
  int64_t step = 0;            // updates done
  int64_t epoch = 0;           // current epoch (0-based)
  int64_t batch_in_epoch = 0;  // next batch of the current epoch
  double best_metric = 0;
  bool has_best = false;
  int64_t best_step = -1;      // the step best.pt holds (-1: unknown, a run from before it was stored)
  int64_t bad_validations = 0;
  double elapsed_seconds = 0;  // over every start of the run (resumes included)
};

struct Run {
  TrainerOptions options;
  Config config;
  torch::Device device{torch::kCPU};
  Precision precision = Precision::fp32;  // train.precision resolved for this machine
  std::optional<Tokenizer> source_tokenizer, target_tokenizer;
  std::shared_ptr<const PreparedCorpus> train;  // read in place, never loaded
  ValidationSet valid;
  ModelPtr model;
  std::unique_ptr<FusedAdam> optimizer;
  std::unique_ptr<LearningRateSchedule> schedule;
  Progress progress;
  std::unique_ptr<TrainingLog> log;
  std::unique_ptr<ProcessGroup> group;  // a no-op group of one without --world-size
  DirectoryLock lock;                   // rank 0: held on the model directory for the run

  std::string path(const std::string& name) const { return options.model_dir + "/" + name; }
  // Rank 0 alone validates, logs and writes the model directory.
  bool is_main() const { return group->is_main(); }
};

/// Writes DIR/name: the model file, plus the optimizer, progress and RNG with the training state.
void save(Run& run, const std::string& name, bool with_training_state);
/// Tokenizers, config (validated), a freshly initialised model and the optimizer.
void start_fresh(Run& run);
/// Adam and the schedule from run.config: for fresh starts, fine-tuning and resumes.
void make_optimizer(Run& run);
/// Fine-tuning (--init-from): the checkpoint's weights, model section and tokenizers, with
/// the train section of this run's config, a fresh optimizer, schedule, step and best score.
void start_from_checkpoint(Run& run);
/// Everything from DIR/last.pt (on ranks other than 0, from rank 0's copy).
void resume(Run& run);
/// True when best.pt is missing, damaged or older than the best model last.pt holds.
bool best_needs_repair(Run& run);
/// "a.b (stored X, given Y), ..." for every key whose value differs between two configs;
/// "" when they are equal.
std::string config_differences(const Config& stored, const Config& given);
/// nmt::Error when --src-spm / --tgt-spm name tokenizers other than `loaded`'s; `checkpoint`
/// says which file in the message.
void refuse_other_tokenizers(const TrainerOptions& options, const LoadedModel& loaded, const std::string& checkpoint);
/// The bytes of the checkpoint at `path`, read by rank 0 and sent to the other ranks (which
/// may not see the file).
std::string checkpoint_bytes_on_every_rank(Run& run, const std::string& path);

/// Opens the training corpus (prepared on first use) and on rank 0 the validation set.
void load_data(Run& run);

/// Checks that the ranks agree on config, tokenizers and corpus; gives all rank 0's weights.
void synchronise_ranks(Run& run);
/// Every rank takes rank 0's schedule state after a validation.
void share_validation_outcome(Run& run);
/// Sums the gradients of all ranks.
void sum_gradients(Run& run);

}  // namespace nmt::training_run
