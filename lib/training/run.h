#pragma once
// The owner of one nmt-train run (TrainingRun) and the progress it keeps across resumes.
// Private to lib/training/.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <vector>

#include "nmt/base/directory_lock.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/inference_model.h"
#include "nmt/models/precision.h"
#include "nmt/text/corpus.h"
#include "nmt/text/prepared_corpus.h"
#include "nmt/text/tokenizer.h"
#include "nmt/training/distributed.h"
#include "nmt/training/fused_adam.h"
#include "nmt/training/loss.h"
#include "nmt/training/schedule.h"
#include "nmt/text/batching.h"
#include "nmt/training/training_schedule.h"
#include "nmt/training/training_state.h"
#include "nmt/training/trainer.h"
#include "nmt/training/validation.h"
#include "overlapped_sum.h"
#include "stop_signals.h"
#include "training_log.h"

namespace nmt::training_run {

/// One nmt-train run, from its options to its result: the single owner of the model, the
/// optimizer, the data, the log, the process group and the progress. What to do after each
/// update is asked of `schedule_` (training_schedule.h). The methods are defined by topic:
/// run_setup.cpp (fresh start, resume, data, checkpoint writing), start_from_checkpoint.cpp
/// (fine-tuning), rank_sync.cpp (what data-parallel ranks exchange), trainer.cpp (the loop).
class TrainingRun {
 public:
  explicit TrainingRun(const TrainerOptions& options);
  /// Reads and checks everything (writing nothing), opens the model directory, trains to
  /// the configured limits and writes the final checkpoints.
  TrainingResult run();

 private:
  // --- setting up (run_setup.cpp, start_from_checkpoint.cpp, trainer.cpp) ---
  /// Reads everything and checks it; writes nothing. Returns whether the run resumes.
  bool prepare();
  /// Tokenizers, config (validated), a freshly initialised model and the optimizer.
  void start_fresh();
  /// Fine-tuning (--init-from): the checkpoint's weights, model section and tokenizers, with
  /// the train section of this run's config, a fresh optimizer, schedule, step and best score.
  void start_from_checkpoint();
  /// Everything from DIR/last.pt (on ranks other than 0, from rank 0's copy).
  void resume();
  void load_for_resume(const std::string& checkpoint);
  /// Adam and the learning-rate schedule from config_: fresh starts, fine-tuning, resumes.
  void make_optimizer();
  /// The bytes of the checkpoint at `path`, read by rank 0 and sent to the other ranks
  /// (which may not see the file).
  std::string checkpoint_bytes_on_every_rank(const std::string& path);
  /// Opens the training corpus (prepared on first use) and on rank 0 the validation set.
  void load_data();
  void load_validation();
  void load_training_corpus();
  std::string cache_directory();
  std::shared_ptr<const PreparedCorpus> open_raw_pair(const std::string& source, const std::string& target,
                                                      const std::string& role);
  std::shared_ptr<const PreparedCorpus> open_given(const std::string& path);
  /// Rank 0, once everything is checked: creates, locks and cleans the model directory.
  void open_model_directory(bool resuming);

  // --- checkpoints (run_setup.cpp, trainer.cpp) ---
  /// Writes DIR/name: the model file, plus (with the training state) the optimizer, state_ and the random streams.
  void save(const std::string& name, bool with_training_state);
  void restore(torch::serialize::InputArchive& archive, const std::string& path);
  /// True when best.pt is missing, damaged or older than the best model last.pt holds.
  bool best_needs_repair();
  std::vector<std::string> step_checkpoints();
  void prune_step_checkpoints(int64_t keep);
  void write_averaged_model();

  // --- ranks (rank_sync.cpp) ---
  /// Checks that the ranks agree on config, tokenizers and corpus; gives all rank 0's weights.
  void synchronise_ranks();
  /// Every rank takes rank 0's learning-rate schedule state after a validation.
  void share_validation_outcome();
  /// Sums the gradients of all ranks.
  void sum_gradients();

  // --- the loop (trainer.cpp) ---
  TrainingResult run_training(double startup_seconds);
  /// One epoch's batches from state_.batch_in_epoch on, until a stop; returns the stop reason.
  std::string train_epoch(TrainingClock& clock, TrainingResult& result, StopSignals& signals);
  /// One update over this rank's share; the loss and target tokens summed over all ranks.
  std::pair<double, int64_t> update(const std::vector<Batch>& batches);
  /// Validates, writes last.pt (then best.pt, step-N.pt); returns whether patience is spent.
  bool validate_and_checkpoint();
  /// Progress lines while a validation runs (`what` names it), at most one every 10 s.
  ValidationProgress validation_progress(const std::string& what) const;
  /// Rank 0: the network validation reads, sharing the training weights, made at first use.
  const InferenceModel& validation_model();
  RunPosition position(double epoch, const TrainingClock& clock) const;

  std::string path(const std::string& name) const { return options_.model_dir + "/" + name; }
  // Rank 0 alone validates, logs and writes the model directory.
  bool is_main() const { return group_->is_main(); }

  TrainerOptions options_;
  Config config_;
  torch::Device device_{torch::kCPU};
  Precision precision_ = Precision::fp32;  // train.precision resolved for this machine
  std::optional<Tokenizer> source_tokenizer_, target_tokenizer_;
  std::shared_ptr<const PreparedCorpus> train_;  // read in place, never loaded
  std::vector<int64_t> source_piece_counts_;     // rank 0: saved in every checkpoint (LoadedModel says why)
  ValidationSet valid_;
  ModelPtr model_;
  InferenceModelPtr validation_model_;  // model_'s weights on the fp32 inference path
  std::unique_ptr<FusedAdam> optimizer_;
  std::unique_ptr<LearningRateSchedule> learning_rate_;  // a policy: its state is state_.plateau
  std::optional<Loss> loss_;  // its kernel decided for device_ when the loop starts
  std::optional<TrainingSchedule> schedule_;  // from config_, once it is final
  TrainingState state_;  // counters, best score, the schedule's state: saved with every last.pt
  struct ValidationScore {
    int64_t step;
    double metric;  // train.metric's, higher is better
  };
  std::optional<ValidationScore> last_validation_;  // of this start of the run: the final averaging reuses it
  std::unique_ptr<TrainingLog> log_;
  std::unique_ptr<ProcessGroup> group_;  // a no-op group of one without --world-size
  DirectoryLock lock_;                   // rank 0: held on the model directory for the run
  RunPosition start_;                    // where this start of the run began (for the ETA)
  int agreed_signal_ = 0;                // a stop signal any rank received (0: none)
  std::unique_ptr<OverlappedGradientSum> overlapped_sum_;  // data-parallel on Gloo with train.overlap_allreduce
  double gradient_sum_seconds_ = 0;  // waited in sum_gradients() since the clock last took it
  /// When the last progress line was printed: nmt-train --progress-every adds lines between
  /// the logged steps of a slow run.
  std::chrono::steady_clock::time_point last_progress_line_ = std::chrono::steady_clock::now();
  bool epoch_planned_before_ = false;    // the first epoch's plan is logged as part of the start-up
};

/// A key (a.b.c) whose value differs between two configs' JSON, with both values as JSON text.
struct ConfigDifference {
  std::string key;
  std::string first;
  std::string second;
};
/// Every key of `first` whose value differs in `second` (a key `second` lacks: "null").
std::vector<ConfigDifference> differing_keys(const nlohmann::json& first, const nlohmann::json& second);
/// "a.b (stored X, given Y), ..." for every key whose value differs between two configs;
/// "" when they are equal.
std::string config_differences(const Config& stored, const Config& given);
/// nmt::Error when --src-spm / --tgt-spm name tokenizers other than `loaded`'s; `checkpoint`
/// says which file in the message.
void refuse_other_tokenizers(const TrainerOptions& options, const LoadedModel& loaded, const std::string& checkpoint);

}  // namespace nmt::training_run
