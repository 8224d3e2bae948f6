#include "nmt/training/trainer.h"

#include <torch/optim/adam.h>

#include <csignal>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "nmt/base/atomic_file.h"
#include "nmt/base/device.h"
#include "nmt/base/error.h"
#include "nmt/models/average.h"
#include "nmt/text/batching.h"
#include "nmt/models/precision.h"
#include "nmt/training/loss.h"
#include "nmt/training/validation.h"
#include "run.h"

namespace nmt {
namespace {

using namespace training_run;

volatile std::sig_atomic_t stop_signal = 0;
void on_signal(int signal) { stop_signal = signal; }

// SIGINT and SIGTERM ask the run to stop at the next step while it trains; the handlers
// found are back however the run ends (a throw included).
class StopSignals {
 public:
  StopSignals() : previous_int_(std::signal(SIGINT, on_signal)), previous_term_(std::signal(SIGTERM, on_signal)) {
    stop_signal = 0;
  }
  ~StopSignals() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  using Handler = void (*)(int);
  Handler previous_int_, previous_term_;
};

void set_learning_rate(torch::optim::Adam& optimizer, double rate) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(rate);
}

// One update over this rank's share of the batches (`accumulate` per rank); returns the
// loss and target tokens summed over all ranks. Each rank divides by the global token
// count, so the summed gradients equal one process training on all the batches.
std::pair<double, int64_t> update(Run& run, const Loss& loss, const std::vector<Batch>& batches) {
  int64_t local_tokens = 0;
  for (const auto& batch : batches) local_tokens += batch.target_tokens;
  const auto tokens = static_cast<int64_t>(run.group->sum(static_cast<double>(local_tokens)));
  torch::Tensor local_loss;  // summed on the device: one host sync per update, below
  for (const auto& batch : batches) {
    auto sums = loss.of_batch(*run.model, batch);
    (sums.loss / static_cast<double>(tokens)).backward();
    const auto detached = sums.loss.detach().to(torch::kDouble);
    local_loss = local_loss.defined() ? local_loss + detached : detached;
  }
  const double loss_sum = run.group->sum(local_loss.defined() ? local_loss.item<double>() : 0.0);
  if (!std::isfinite(loss_sum))
    throw Error("training loss became " + std::to_string(loss_sum) + " at step " +
                std::to_string(run.progress.step + 1) +
                "; lower train.learning_rate or raise train.warmup_steps (last.pt keeps the last good state)");
  sum_gradients(run);
  const auto parameters = run.model->parameters();
  const double clip_norm = run.config.train.clip_norm;
  set_learning_rate(*run.optimizer, run.schedule->rate(run.progress.step + 1));
  run.optimizer->update(clip_norm > 0 ? clipping_factor(parameters, clip_norm) : 1.0);
  release_gradients(parameters);
  ++run.progress.step;
  return {loss_sum, tokens};
}

// The step-N.pt files of the model directory, oldest first (whatever steps they were saved at).
std::vector<std::string> step_checkpoints(const Run& run) {
  static const std::regex step_file(R"(step-([0-9]+)\.pt)");
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& entry : std::filesystem::directory_iterator(run.options.model_dir)) {
    std::smatch match;
    const auto name = entry.path().filename().string();
    if (std::regex_match(name, match, step_file)) found.emplace_back(std::stoll(match[1].str()), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& item : found) paths.push_back(std::move(item.second));
  return paths;
}

// Removes all but the newest `keep` step checkpoints.
void prune_step_checkpoints(Run& run, int64_t keep) {
  const auto paths = step_checkpoints(run);
  for (size_t i = 0; i + static_cast<size_t>(keep) < paths.size(); ++i) std::filesystem::remove(paths[i]);
}

// train.average_last K: averaged.pt is the mean of the newest m kept step checkpoints,
// m in 1..K chosen by the validation metric (each candidate mean is validated). A fixed
// m = K hurts where training was slow: the last K checkpoints reach back to early steps
// (an hour of fp32 on an AVX2 CPU: averaging from step 500 of 1,266 cost 3.2 BLEU).
void write_averaged_model(Run& run) {
  const auto& t = run.config.train;
  auto paths = step_checkpoints(run);
  const auto k = static_cast<size_t>(t.average_last);
  if (paths.size() > k) paths.erase(paths.begin(), paths.end() - static_cast<long>(k));
  size_t chosen = 1;
  double chosen_metric = 0;
  for (size_t m = 1; m <= paths.size(); ++m) {
    const std::vector<std::string> newest(paths.end() - static_cast<long>(m), paths.end());
    auto candidate = average_checkpoints(newest);
    candidate.model->to(run.device);
    const auto result = validate(*candidate.model, run.valid, *run.target_tokenizer, t.batch_tokens,
                                 t.valid_max_sentences, run.device);
    const double metric = result.metric(t.metric);
    char score[32];
    std::snprintf(score, sizeof score, "%.10g", t.metric == "loss" ? -metric : metric);
    run.log->message("mean of the newest " + std::to_string(m) + " step checkpoints: " + t.metric + " " + score);
    if (m == 1 || metric > chosen_metric) chosen = m, chosen_metric = metric;
  }
  paths.erase(paths.begin(), paths.end() - static_cast<long>(chosen));
  write_average(paths, run.path("averaged.pt"));
  run.log->message("wrote " + run.path("averaged.pt") + ": the mean of " + std::to_string(paths.size()) +
                   " step checkpoints (" + std::filesystem::path(paths.front()).filename().string() + " .. " +
                   std::filesystem::path(paths.back()).filename().string() + "), the best of the newest 1-" +
                   std::to_string(std::min(k, step_checkpoints(run).size())) + " on validation");
}

// Validates, saves last (then best), and returns true when early stopping says stop.
// last.pt first: it records which step best.pt holds, so a kill before best.pt is
// written is repaired on resume (best_needs_repair) instead of keeping a stale best.
bool validate_and_checkpoint(Run& run) {
  const auto& t = run.config.train;
  const auto result = validate(*run.model, run.valid, *run.target_tokenizer, t.batch_tokens,
                               t.valid_max_sentences, run.device);
  const double metric = result.metric(t.metric);
  auto& p = run.progress;
  const bool improved = !p.has_best || metric > p.best_metric;
  if (improved) p.best_metric = metric, p.has_best = true, p.best_step = p.step, p.bad_validations = 0;
  else ++p.bad_validations;
  run.schedule->on_validation(improved);
  run.log->validation(p.step, result, improved, t.metric);
  save(run, "last.pt", true);
  if (improved) save(run, "best.pt", false);
  if (t.keep_last > 0) {
    save(run, "step-" + std::to_string(p.step) + ".pt", false);
    prune_step_checkpoints(run, t.keep_last);
  }
  return t.patience > 0 && p.bad_validations >= t.patience;
}

// Rank 0, once the config and inputs have been checked: only now does the model
// directory change (created, locked, cleaned of dead writers' temporaries, logged to).
void open_model_directory(Run& run, bool resuming) {
  if (!run.is_main()) return;
  std::filesystem::create_directories(run.options.model_dir);
  if (!run.lock.held()) run.lock = DirectoryLock(run.options.model_dir);
  for (const auto& name : remove_stale_temporaries(run.options.model_dir))
    run.log->message("removed " + run.path(name) + " (left by an interrupted write)");
  run.log->open(run.path("train.jsonl"), run.progress.step);
  if (resuming) run.log->message("resuming from " + run.path("last.pt") + " at step " + std::to_string(run.progress.step));
  run.log->config(run.config, run.model->parameters());
  run.log->message("precision: " + precision_name(run.precision) +
                   (run.config.train.precision == "auto" ? " (train.precision auto)" : ""));
  write_file_atomically(run.path("config.json"), config_to_json(run.config).dump(2) + "\n");
  if (resuming && best_needs_repair(run)) {
    save(run, "best.pt", false);
    run.log->message("rewrote " + run.path("best.pt") + " from last.pt (step " + std::to_string(run.progress.step) +
                     "): the run was stopped before writing it");
  }
}

// Why the run stops before its first step, if its limits are already reached (a finished
// run started again, or --max-steps below the resumed step): then nothing is trained or written.
std::string reached_limit(const Run& run) {
  const auto& t = run.config.train;
  const auto& p = run.progress;
  if (t.max_steps > 0 && p.step >= t.max_steps) return "already at max_steps " + std::to_string(t.max_steps);
  if (t.max_epochs > 0 && p.epoch >= t.max_epochs) return "already at max_epochs " + std::to_string(t.max_epochs);
  if (t.max_time_minutes > 0 && p.elapsed_seconds >= t.max_time_minutes * 60) return "already at max_time_minutes";
  return {};
}

// One epoch's batches from p.batch_in_epoch on, until a stop; returns the stop reason.
std::string train_epoch(Run& run, const Loss& loss_function, TrainingLoop& loop, TrainingResult& result,
                        int64_t& agreed_signal, bool& planned_before) {
  const auto& t = run.config.train;
  auto& p = run.progress;
  const auto planning = std::chrono::steady_clock::now();
  const auto batches = make_batches(*run.train, t.batch_tokens, static_cast<uint64_t>(t.seed) * 1000003ULL + p.epoch,
                                    true, static_cast<size_t>(t.max_length));
  const auto count = static_cast<int64_t>(batches.size());
  const double plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - planning).count();
  char planned[160];
  std::snprintf(planned, sizeof planned, "epoch %lld: %lld batches of %zu pairs, planned in %.2f s",
                static_cast<long long>(p.epoch + 1), static_cast<long long>(count), batches.pairs(), plan_seconds);
  if (!planned_before || plan_seconds >= 1.0) run.log->message(planned);  // the first: part of the start-up
  planned_before = true;
  const auto rank = static_cast<int64_t>(run.group->rank());
  const int64_t batches_per_update = t.accumulate * run.group->world_size();
  std::string stop;
  while (p.batch_in_epoch < count && stop.empty()) {
    // Every rank sees the same batch order; rank r takes its `accumulate` batches of the update.
    const int64_t update_end = std::min(p.batch_in_epoch + batches_per_update, count);
    std::vector<Batch> group;
    for (int64_t b = p.batch_in_epoch + rank * t.accumulate;
         b < std::min(p.batch_in_epoch + (rank + 1) * t.accumulate, update_end); ++b)
      group.push_back(collate(*run.train, batches.batch(static_cast<size_t>(b))));
    p.batch_in_epoch = update_end;
    const auto [loss, tokens] = update(run, loss_function, group);
    result.last_train_loss = loss / static_cast<double>(tokens);
    loop.count(tokens, loss);
    p.elapsed_seconds = loop.elapsed_seconds();
    const double epoch_fraction = p.epoch + double(p.batch_in_epoch) / double(count);
    if (p.step % t.log_every == 0) run.log->progress(p.step, epoch_fraction, loop, run.schedule->rate(p.step));
    bool stop_early = false;
    if (p.step % t.valid_every == 0) {
      if (run.is_main()) stop_early = validate_and_checkpoint(run);
      share_validation_outcome(run);
    } else if (t.save_every > 0 && p.step % t.save_every == 0 && run.is_main()) {
      save(run, "last.pt", true);  // a crash between validations loses at most save_every steps
    }
    // Rank 0 decides (time limits differ by rank); a signal to any rank stops them all.
    agreed_signal = run.group->max(stop_signal);
    stop = run.group->broadcast_bytes(
        run.is_main() ? loop.stop_reason(p.step, epoch_fraction, stop_early, static_cast<int>(agreed_signal)) : "");
  }
  if (p.batch_in_epoch >= count) {
    ++p.epoch, p.batch_in_epoch = 0;
    if (stop.empty() && t.max_epochs > 0 && p.epoch >= t.max_epochs) stop = "reached max_epochs";
  }
  return stop;
}

TrainingResult run_training(Run& run, double startup_seconds) {
  TrainingResult result;
  const auto& t = run.config.train;
  result.stop_reason = reached_limit(run);
  const bool train_now = result.stop_reason.empty();
  const StopSignals stop_signals;
  TrainingLoop loop(t, run.progress.elapsed_seconds, run.progress.step, run.progress.epoch);
  int64_t agreed_signal = 0;
  if (train_now) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f", startup_seconds);
    run.log->message("start-up took " + std::string(took) + " s; training from step " +
                     std::to_string(run.progress.step + 1));
  }
  bool planned_before = false;
  {
    // The model computes on its training path until the loop ends, however it ends
    // (validation takes the inference path for its own pass).
    const LinearPathScope training_mode(*run.model, training_path(run.precision, run.device));
    const Loss loss(run.device, t.label_smoothing);
    if (train_now && run.is_main() && run.options.on_model_ready) run.options.on_model_ready(*run.model);
    while (result.stop_reason.empty())
      result.stop_reason = train_epoch(run, loss, loop, result, agreed_signal, planned_before);
  }
  // A signal asks for a quick exit: save where we are, skip the final validation.
  if (run.is_main() && train_now) {
    if (agreed_signal == 0 && run.progress.step % t.valid_every != 0) validate_and_checkpoint(run);
    else save(run, "last.pt", true);
    if (agreed_signal == 0 && t.average_last > 0) write_averaged_model(run);
  }
  run.group->wait_for_main();  // the other ranks finish only once rank 0 has saved
  result.steps = run.progress.step;
  result.epochs_completed = run.progress.epoch;
  result.best_metric = run.progress.best_metric;
  result.model = run.model;
  run.log->message("stopped: " + result.stop_reason + "; checkpoints in " + run.options.model_dir);
  return result;
}

// Reads everything and checks it; writes nothing. Returns whether the run resumes.
bool prepare(Run& run) {
  const auto& options = run.options;
  run.device = parse_device(options.device);
  if (options.distributed.enabled() && !run.device.is_cpu())
    throw Error("distributed training runs on CPU (Gloo) only: this LibTorch has no NCCL for " + options.device);
  run.group = std::make_unique<ProcessGroup>(options.distributed);
  run.log = std::make_unique<TrainingLog>(options.quiet || !run.is_main(), run.is_main());
  // Locked before last.pt is read: another run may be writing it.
  if (run.is_main() && std::filesystem::is_directory(options.model_dir))
    run.lock = DirectoryLock(options.model_dir);
  const bool resuming = run.group->max(run.is_main() && std::filesystem::exists(run.path("last.pt"))) != 0;
  if (options.resume && !resuming) throw Error("--resume: no " + run.path("last.pt") + " to resume from");
  if (resuming && !options.init_from.empty())
    throw Error("--init-from: " + run.path("last.pt") + " exists; resume that run (without --init-from) or "
                "fine-tune into a new --model-dir");
  if (resuming) resume(run);
  else if (!options.init_from.empty()) start_from_checkpoint(run);
  else start_fresh(run);
  run.precision = resolve_training_precision(run.config.train.precision, run.device);
  load_data(run);
  return resuming;
}

}  // namespace

TrainingResult train(const TrainerOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  Run run;
  run.options = options;
  try {
    const bool resuming = prepare(run);
    open_model_directory(run, resuming);
    synchronise_ranks(run);
    return run_training(run, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  } catch (const std::exception& e) {
    if (run.log) run.log->error(e.what());  // written only once the log is open, after the checks
    throw;
  }
}

}  // namespace nmt
