#include "nmt/training/trainer.h"

#include <torch/optim/adam.h>

#include <algorithm>
#include <chrono>
#include <utility>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "nmt/base/atomic_file.h"
#include "nmt/base/device.h"
#include "nmt/base/error.h"
#include "nmt/models/average.h"
#include "nmt/models/inference_model.h"
#include "nmt/text/batching.h"
#include "nmt/models/precision.h"
#include "nmt/training/loss.h"
#include "nmt/base/progress_lines.h"
#include "nmt/training/validation.h"
#include "run.h"

namespace nmt {
namespace {

using namespace training_run;

void set_learning_rate(torch::optim::Adam& optimizer, double rate) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(rate);
}

}  // namespace

namespace training_run {

// One update over this rank's share of the batches (`accumulate` per rank); returns the
// loss and target tokens summed over all ranks. Each rank divides by the global token
// count, so the summed gradients equal one process training on all the batches.
std::pair<double, int64_t> TrainingRun::update(const std::vector<Batch>& batches) {
  int64_t local_tokens = 0;
  for (const auto& batch : batches) local_tokens += batch.target_tokens;
  const auto tokens = static_cast<int64_t>(group_->sum(static_cast<double>(local_tokens)));
  torch::Tensor local_loss;  // summed on the device: one host sync per update, below
  for (size_t i = 0; i < batches.size(); ++i) {
    if (overlapped_sum_ && i + 1 == batches.size()) overlapped_sum_->arm();  // summed during this backward
    auto sums = loss_->of_batch(*model_, batches[i]);
    (sums.loss / static_cast<double>(tokens)).backward();
    const auto detached = sums.loss.detach().to(torch::kDouble);
    local_loss = local_loss.defined() ? local_loss + detached : detached;
  }
  sum_gradients();  // before any other collective: the buckets' sums started during backward come first
  const double loss_sum = group_->sum(local_loss.defined() ? local_loss.item<double>() : 0.0);
  if (!std::isfinite(loss_sum))
    throw Error("training loss became " + std::to_string(loss_sum) + " at step " +
                std::to_string(state_.step + 1) +
                "; lower train.learning_rate or raise train.warmup_steps (last.pt keeps the last good state)");
  const auto parameters = model_->parameters();
  const double clip_norm = config_.train.clip_norm;
  set_learning_rate(*optimizer_, learning_rate_->rate(state_.step + 1, state_.plateau));
  optimizer_->update(clip_norm > 0 ? clipping_factor(parameters, clip_norm) : 1.0);
  release_gradients(parameters);
  ++state_.step;
  return {loss_sum, tokens};
}

// The step-N.pt files of the model directory, oldest first (whatever steps they were saved at).
std::vector<std::string> TrainingRun::step_checkpoints() {
  static const std::regex step_file(R"(step-([0-9]+)\.pt)");
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& entry : std::filesystem::directory_iterator(options_.model_dir)) {
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
void TrainingRun::prune_step_checkpoints(int64_t keep) {
  const auto paths = step_checkpoints();
  for (size_t i = 0; i + static_cast<size_t>(keep) < paths.size(); ++i) std::filesystem::remove(paths[i]);
}

// train.average_last K: averaged.pt is the mean of the newest m kept step checkpoints,
// m in 1..K chosen by the validation metric (each candidate mean is validated). A fixed
// m = K hurts where training was slow: the last K checkpoints reach back to early steps
// (an hour of fp32 on an AVX2 CPU: averaging from step 500 of 1,266 cost 3.2 BLEU).
void TrainingRun::write_averaged_model() {
  const auto& t = config_.train;
  auto paths = step_checkpoints();
  const auto k = static_cast<size_t>(t.average_last);
  if (paths.size() > k) paths.erase(paths.begin(), paths.end() - static_cast<long>(k));
  std::vector<double> metrics;  // of the mean of the newest m, at m - 1
  for (size_t m = 1; m <= paths.size(); ++m) {
    const std::vector<std::string> newest(paths.end() - static_cast<long>(m), paths.end());
    // The newest alone holds the final weights, validated when it was written: not again.
    const bool validated = m == 1 && last_validation_ && last_validation_->step == state_.step &&
                           std::filesystem::path(newest.front()).filename() ==
                               "step-" + std::to_string(state_.step) + ".pt";
    double metric = validated ? last_validation_->metric : 0;
    if (!validated) {
      auto candidate = average_checkpoints(newest);
      candidate.model->to(device_);
      const InferenceModel on_inference_path(std::move(candidate), Precision::fp32, device_);
      metric = validate(on_inference_path, valid_, t.batch_tokens, t.valid_max_sentences,
                        validation_progress("validating the mean of the newest " + std::to_string(m)))
                   .metric(t.metric);
    }
    char score[32];
    std::snprintf(score, sizeof score, "%.10g", t.metric == "loss" ? -metric : metric);
    log_->message("mean of the newest " + std::to_string(m) + " step checkpoints: " + t.metric + " " + score +
                  (validated ? " (the final weights, validated above)" : ""));
    metrics.push_back(metric);
  }
  const size_t chosen = TrainingSchedule::averaging_choice(metrics);
  paths.erase(paths.begin(), paths.end() - static_cast<long>(chosen));
  write_average(paths, path("averaged.pt"));
  log_->message("wrote " + path("averaged.pt") + ": the mean of " + std::to_string(paths.size()) +
                   " step checkpoints (" + std::filesystem::path(paths.front()).filename().string() + " .. " +
                   std::filesystem::path(paths.back()).filename().string() + "), the best of the newest 1-" +
                   std::to_string(std::min(k, step_checkpoints().size())) + " on validation");
}

// Validates, saves last (then best), and returns true when early stopping says stop.
// last.pt first: it records which step best.pt holds, so a kill before best.pt is
// written is repaired on resume (best_needs_repair) instead of keeping a stale best.
bool TrainingRun::validate_and_checkpoint() {
  const auto& t = config_.train;
  const auto result = validate(validation_model(), valid_, t.batch_tokens, t.valid_max_sentences,
                               validation_progress("validation @ step " + std::to_string(state_.step)));
  const double metric = result.metric(t.metric);
  auto& p = state_;
  last_validation_ = ValidationScore{p.step, metric};
  const bool improved = TrainingSchedule::improves(p.has_best, p.best_metric, metric);
  if (improved) p.best_metric = metric, p.has_best = true, p.best_step = p.step, p.bad_validations = 0;
  else ++p.bad_validations;
  state_.plateau = learning_rate_->after_validation(state_.plateau, improved);
  log_->validation(p.step, result, improved, t.metric);
  save("last.pt", true);
  if (improved) save("best.pt", false);
  if (t.keep_last > 0) {
    save("step-" + std::to_string(p.step) + ".pt", false);
    prune_step_checkpoints(t.keep_last);
  }
  return schedule_->patience_spent(p.bad_validations);
}

// Rank 0, once the config and inputs have been checked: only now does the model
// directory change (created, locked, cleaned of dead writers' temporaries, logged to).
void TrainingRun::open_model_directory(bool resuming) {
  if (!is_main()) return;
  std::filesystem::create_directories(options_.model_dir);
  if (!lock_.held()) lock_ = DirectoryLock(options_.model_dir);
  for (const auto& name : remove_stale_temporaries(options_.model_dir))
    log_->message("removed " + path(name) + " (left by an interrupted write)");
  log_->open(path("train.jsonl"), state_.step);
  if (resuming) log_->message("resuming from " + path("last.pt") + " at step " + std::to_string(state_.step));
  log_->config(config_, model_->parameters());
  log_->message("precision: " + precision_name(precision_) +
                   (config_.train.precision == "auto" ? " (train.precision auto)" : ""));
  write_file_atomically(path("config.json"), config_to_json(config_).dump(2) + "\n");
  if (resuming && best_needs_repair()) {
    save("best.pt", false);
    log_->message("rewrote " + path("best.pt") + " from last.pt (step " + std::to_string(state_.step) +
                     "): the run was stopped before writing it");
  }
}

const InferenceModel& TrainingRun::validation_model() {
  if (!validation_model_) {
    LoadedModel twin{config_, network_sharing_weights(config_.model, *model_), *source_tokenizer_, *target_tokenizer_};
    twin.model->to(device_);
    validation_model_ = set_up_for_inference(std::move(twin), Precision::fp32, device_, WeightUpdates::by_training);
  }
  return *validation_model_;
}

ValidationProgress TrainingRun::validation_progress(const std::string& what) const {
  const auto started = std::chrono::steady_clock::now();
  return [this, what, started, last = started](size_t done, size_t total) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (done >= total || now - last < progress_interval(options_.progress_every_seconds)) return;
    last = now;
    char text[200];
    std::snprintf(text, sizeof text, "%s: %zu of %zu sentences translated in %.0f s", what.c_str(), done, total,
                  std::chrono::duration<double>(now - started).count());
    log_->status(text);
  };
}

RunPosition TrainingRun::position(double epoch, const TrainingClock& clock) const {
  return {state_.step, epoch, clock.elapsed_seconds()};
}

std::string TrainingRun::train_epoch(TrainingClock& clock, TrainingResult& result, StopSignals& signals) {
  const auto& t = config_.train;
  auto& p = state_;
  const auto planning = std::chrono::steady_clock::now();
  const auto batches = make_batches(*train_, t.batch_tokens, static_cast<uint64_t>(t.seed) * 1000003ULL + p.epoch,
                                    true, static_cast<size_t>(t.max_length));
  const auto count = static_cast<int64_t>(batches.size());
  const double plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - planning).count();
  char planned[160];
  std::snprintf(planned, sizeof planned, "epoch %lld: %lld batches of %zu pairs, planned in %.2f s",
                static_cast<long long>(p.epoch + 1), static_cast<long long>(count), batches.pairs(), plan_seconds);
  if (!epoch_planned_before_ || plan_seconds >= 1.0) log_->message(planned);
  epoch_planned_before_ = true;
  const auto rank = static_cast<int64_t>(group_->rank());
  const int64_t batches_per_update = t.accumulate * group_->world_size();
  std::string stop;
  while (p.batch_in_epoch < count && stop.empty()) {
    const auto step_started = std::chrono::steady_clock::now();
    // Every rank sees the same batch order; rank r takes its `accumulate` batches of the update.
    const int64_t update_end = std::min(p.batch_in_epoch + batches_per_update, count);
    std::vector<Batch> group;
    for (int64_t b = p.batch_in_epoch + rank * t.accumulate;
         b < std::min(p.batch_in_epoch + (rank + 1) * t.accumulate, update_end); ++b)
      group.push_back(collate(*train_, batches.batch(static_cast<size_t>(b))));
    p.batch_in_epoch = update_end;
    const auto [loss, tokens] = update(group);
    result.last_train_loss = loss / static_cast<double>(tokens);
    clock.count(tokens, loss);
    clock.count_gradient_sum_wait(std::exchange(gradient_sum_seconds_, 0.0));
    p.elapsed_seconds = clock.elapsed_seconds();
    const auto now = position(p.epoch + double(p.batch_in_epoch) / double(count), clock);
    const bool logged = schedule_->log_now(p.step);
    const bool line_due = std::chrono::steady_clock::now() - last_progress_line_ >=
                          progress_interval(options_.progress_every_seconds);
    if (logged || line_due) {
      const auto window = logged ? clock.take_window() : clock.peek_window();
      const ProgressLine line{p.step, now.epoch, window.loss, learning_rate_->rate(p.step, p.plateau), window.tokens_per_second,
                              now.elapsed_seconds, schedule_->eta(start_, now, clock.pace()),
                              group_->world_size() > 1 ? window.gradient_sum_share : -1};
      if (logged) log_->progress(line);
      else log_->progress_between_logs(line);
      last_progress_line_ = std::chrono::steady_clock::now();
    }
    bool patience_spent = false;
    if (schedule_->validate_now(p.step)) {
      const auto validation_started = std::chrono::steady_clock::now();
      if (is_main()) patience_spent = validate_and_checkpoint();
      share_validation_outcome();
      clock.count_validation(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - validation_started).count());
    } else if (schedule_->save_now(p.step) && is_main()) {
      save("last.pt", true);
    }
    // Rank 0 decides (time limits differ by rank); a signal to any rank stops them all.
    agreed_signal_ = static_cast<int>(group_->max(signals.requested()));
    stop = group_->broadcast_bytes(
        is_main() ? schedule_->stop_reason(position(now.epoch, clock), patience_spent, agreed_signal_) : "");
    signals.step_took(std::chrono::duration<double>(std::chrono::steady_clock::now() - step_started).count());
  }
  if (p.batch_in_epoch >= count) {
    ++p.epoch, p.batch_in_epoch = 0;
    if (stop.empty()) stop = schedule_->stop_at_epoch_end(p.epoch);
  }
  return stop;
}

TrainingResult TrainingRun::run_training(double startup_seconds) {
  TrainingResult result;
  result.stop_reason = schedule_->reached_before_start(state_.step, state_.epoch, state_.elapsed_seconds);
  const bool train_now = result.stop_reason.empty();
  StopSignals stop_signals(group_->rank(), group_->world_size());
  TrainingClock clock(state_.elapsed_seconds);
  start_ = {state_.step, static_cast<double>(state_.epoch), state_.elapsed_seconds};
  if (train_now) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f", startup_seconds);
    log_->message("start-up took " + std::string(took) + " s; training from step " + std::to_string(state_.step + 1));
  }
  {
    // The model computes on its training path until the loop ends, however it ends
    // (validation reads its weights through a network of its own on the inference path).
    const LinearPathScope training_mode(*model_, training_path(precision_, device_));
    loss_.emplace(device_, config_.train.label_smoothing);
    if (train_now && is_main() && options_.on_model_ready) options_.on_model_ready(*model_);
    while (result.stop_reason.empty()) result.stop_reason = train_epoch(clock, result, stop_signals);
  }
  stop_signals.disarm_watchdog();  // the ranks agreed to stop: the final save may take its time
  if (is_main() && train_now) {
    if (schedule_->validate_at_end(state_.step, agreed_signal_)) validate_and_checkpoint();
    else save("last.pt", true);
    if (schedule_->average_at_end(agreed_signal_)) write_averaged_model();
  }
  group_->wait_for_main();  // the other ranks finish only once rank 0 has saved
  result.steps = state_.step;
  result.epochs_completed = state_.epoch;
  result.best_metric = state_.best_metric;
  result.model = model_;
  log_->message("stopped: " + result.stop_reason + "; checkpoints in " + options_.model_dir);
  return result;
}

bool TrainingRun::prepare() {
  device_ = parse_device(options_.device);
  // Chosen once: Gloo on the CPU, NCCL on CUDA (an error where LibTorch has no NCCL), and
  // there one GPU per rank, the one its local rank names.
  const auto backend = options_.distributed.enabled() ? distributed_backend_for(device_) : DistributedBackend::gloo;
  if (backend == DistributedBackend::nccl) {
    const auto rank_device = static_cast<c10::DeviceIndex>(options_.distributed.local_rank);
    if (device_.has_index() && device_.index() != rank_device)
      throw Error("--device " + device_.str() + ": with NCCL each rank trains on the GPU its local rank names (cuda:" +
                  std::to_string(options_.distributed.local_rank) + "); pass --device cuda");
    device_ = torch::Device(torch::kCUDA, rank_device);
  }
  group_ = std::make_unique<ProcessGroup>(options_.distributed, backend);
  log_ = std::make_unique<TrainingLog>(options_.quiet || !is_main(), is_main());
  // Locked before last.pt is read: another run may be writing it.
  if (is_main() && std::filesystem::is_directory(options_.model_dir)) lock_ = DirectoryLock(options_.model_dir);
  const bool resuming = group_->max(is_main() && std::filesystem::exists(path("last.pt"))) != 0;
  if (options_.resume && !resuming) throw Error("--resume: no " + path("last.pt") + " to resume from");
  if (resuming && !options_.init_from.empty())
    throw Error("--init-from: " + path("last.pt") + " exists; resume that run (without --init-from) or "
                "fine-tune into a new --model-dir");
  if (resuming) resume();
  else if (!options_.init_from.empty()) start_from_checkpoint();
  else start_fresh();
  schedule_.emplace(config_.train);  // the config is final: stored (resume) or checked (fresh)
  precision_ = resolve_training_precision(config_.train.precision, device_);
  load_data();
  return resuming;
}

TrainingRun::TrainingRun(const TrainerOptions& options) : options_(options) {}

TrainingResult TrainingRun::run() {
  const auto started = std::chrono::steady_clock::now();
  try {
    const bool resuming = prepare();
    open_model_directory(resuming);
    synchronise_ranks();
    return run_training(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  } catch (const std::exception& e) {
    if (log_) log_->error(e.what());  // written only once the log is open, after the checks
    throw;
  }
}

}  // namespace training_run

TrainingResult train(const TrainerOptions& options) { return training_run::TrainingRun(options).run(); }

}  // namespace nmt
