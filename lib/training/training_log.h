#pragma once
// Progress reporting for training: human lines on stderr, JSON lines in train.jsonl,
// and the clock that measures throughput and time.
#include <torch/types.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "nmt/base/config.h"
#include "nmt/training/training_schedule.h"
#include "nmt/training/validation.h"

namespace nmt {

/// The wall clock of one start of a run: time since it began (plus earlier starts'), and
/// target tokens and loss since the last progress line. When to stop is the schedule's
/// question (training_schedule.h); this only measures.
class TrainingClock {
 public:
  explicit TrainingClock(double previous_seconds);
  void count(int64_t target_tokens, double loss_sum);
  /// Time an update spent waiting for the gradients' sum over the ranks (data-parallel).
  void count_gradient_sum_wait(double seconds);
  /// A validation (with its checkpoints) took `seconds`: the ETA counts it apart from training.
  void count_validation(double seconds);
  /// This start's time: training apart from validations, and the last validation's.
  RunPace pace() const;
  /// Over every start of the run.
  double elapsed_seconds() const;
  /// Since this start of the run.
  double seconds_since_start() const;
  struct Window {
    double tokens_per_second = 0;
    double loss = 0;                ///< mean per target token
    double gradient_sum_share = 0;  ///< of the window's time, waiting for the gradients' sum
  };
  /// Since the last call; resets.
  Window take_window();
  /// The same figures, without resetting.
  Window peek_window() const;

 private:
  using Clock = std::chrono::steady_clock;
  double previous_seconds_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point window_start_ = Clock::now();
  int64_t window_tokens_ = 0;
  double window_loss_ = 0;
  double window_gradient_sum_seconds_ = 0;
  double validation_seconds_ = 0;        ///< since this start
  double last_validation_seconds_ = -1;  ///< negative: none yet
};

/// One progress line's figures.
struct ProgressLine {
  int64_t step = 0;
  double epoch = 0;
  double loss = 0;  ///< mean per target token since the last line
  double learning_rate = 0;
  double tokens_per_second = 0;
  double elapsed_seconds = 0;
  Eta eta;                  ///< time left, validations included
  double gradient_sum_share = -1;  ///< share of the time spent waiting for the ranks' gradient sum; negative: one process
};

class TrainingLog {
 public:
  /// With `records`, JSON records are kept in memory until open() (nothing touches the
  /// model directory before a run's inputs are checked); without (the non-zero ranks of
  /// a distributed run), none are kept.
  TrainingLog(bool quiet, bool records);
  /// Starts writing `jsonl_path`. Records of an earlier start of the run with a step after
  /// `resumed_step` (logged, then lost by a kill before the next last.pt) are dropped, so
  /// each step appears once however often the run was interrupted. Then appends.
  void open(const std::string& jsonl_path, int64_t resumed_step);
  /// A failure, as the last record of this start of the run.
  void error(const std::string& text);
  void message(const std::string& text);
  /// Progress within a stage (a validation under way): on the terminal unless quiet, not
  /// recorded in train.jsonl.
  void status(const std::string& text);
  void config(const Config& config, const std::vector<torch::Tensor>& parameters);
  void progress(const ProgressLine& line);
  /// The same line on stderr only, between the logged steps (nmt-train --progress-every):
  /// a terminal hears from a slow run, while train.jsonl keeps one record per log_every.
  void progress_between_logs(const ProgressLine& line);
  /// The line shows `chosen_metric` (train.metric) first; BLEU is left out of it, with a
  /// one-time note, where most references are too short for 4-grams (train.jsonl keeps it).
  void validation(int64_t step, const ValidationResult& result, bool best, const std::string& chosen_metric);

 private:
  void write(const nlohmann::json& record);
  std::ofstream jsonl_;
  std::vector<nlohmann::json> pending_;  // records before open()
  bool quiet_;
  bool records_;
  bool bleu_note_written_ = false;
};

std::string format_duration(double seconds);

}  // namespace nmt
