#include "nmt/training/trainer.h"

#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "nmt/base/atomic_file.h"
#include "nmt/text/batching.h"
#include "nmt/models/checkpoint.h"
#include "nmt/base/error.h"
#include "nmt/training/loss.h"
#include "nmt/models/registry.h"
#include "nmt/training/schedule.h"
#include "nmt/base/device.h"
#include "nmt/training/distributed.h"
#include "nmt/training/training_log.h"
#include "nmt/training/validation.h"

namespace nmt {
namespace {

volatile std::sig_atomic_t stop_signal = 0;
void on_signal(int signal) { stop_signal = signal; }

// Everything that changes while training and must survive a resume.
struct Progress {
  int64_t step = 0;            // updates done
  int64_t epoch = 0;           // current epoch (0-based)
  int64_t batch_in_epoch = 0;  // next batch of the current epoch
  double best_metric = 0;
  bool has_best = false;
  int64_t bad_validations = 0;
  double elapsed_seconds = 0;  // over all sessions
};

struct Run {
  TrainerOptions options;
  Config config;
  torch::Device device{torch::kCPU};
  std::optional<Tokenizer> source_tokenizer, target_tokenizer;
  EncodedCorpus train;
  ValidationSet valid;
  ModelPtr model;
  std::unique_ptr<torch::optim::Adam> optimizer;
  std::unique_ptr<LearningRateSchedule> schedule;
  Progress progress;
  std::unique_ptr<TrainingLog> log;
  std::unique_ptr<ProcessGroup> group;  // a no-op group of one without --world-size

  std::string path(const std::string& name) const { return options.model_dir + "/" + name; }
  // Rank 0 alone validates, logs and writes the model directory.
  bool is_main() const { return group->is_main(); }
};

void save(Run& run, const std::string& name, bool with_training_state) {
  torch::serialize::OutputArchive state;
  if (with_training_state) {
    torch::serialize::OutputArchive optimizer;
    run.optimizer->save(optimizer);
    state.write("optimizer", optimizer);
    const auto& p = run.progress;
    state.write("progress", torch::tensor({p.step, p.epoch, p.batch_in_epoch, int64_t(p.has_best),
                                           p.bad_validations, run.schedule->stalled_validations}));
    state.write("progress_real", torch::tensor({p.best_metric, p.elapsed_seconds,
                                                run.schedule->plateau_scale}, torch::kFloat64));
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    state.write("rng", generator.get_state());
  }
  save_checkpoint(run.path(name), run.config, *run.model, *run.source_tokenizer, *run.target_tokenizer,
                  with_training_state ? &state : nullptr);
}

void restore(Run& run, torch::serialize::InputArchive& archive) {
  torch::serialize::InputArchive state, optimizer;
  archive.read("training", state);
  state.read("optimizer", optimizer);
  run.optimizer->load(optimizer);
  torch::Tensor counters, reals, rng;
  state.read("progress", counters);
  state.read("progress_real", reals);
  state.read("rng", rng);
  auto c = counters.accessor<int64_t, 1>();
  auto r = reals.accessor<double, 1>();
  auto& p = run.progress;
  p.step = c[0], p.epoch = c[1], p.batch_in_epoch = c[2], p.has_best = c[3] != 0;
  p.bad_validations = c[4];
  run.schedule->stalled_validations = c[5];
  p.best_metric = r[0], p.elapsed_seconds = r[1];
  run.schedule->plateau_scale = r[2];
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(rng);
}

std::string read_stored_string(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  return value.toStringRef();
}

// Adam and the schedule from run.config; shared by fresh starts and resumes.
void make_optimizer(Run& run) {
  const auto& t = run.config.train;
  run.optimizer = std::make_unique<torch::optim::Adam>(
      run.model->parameters(), torch::optim::AdamOptions(t.learning_rate)
                                   .betas({t.adam_beta1, t.adam_beta2})
                                   .eps(t.adam_eps)
                                   .weight_decay(t.weight_decay));
  run.schedule = std::make_unique<LearningRateSchedule>(t);
}

// Resuming: the stored config wins, except the limits given on this command line.
// `checkpoint` is last.pt, or on ranks other than 0 a private copy of rank 0's.
void load_for_resume(Run& run, const std::string& checkpoint) {
  auto archive = read_checkpoint_archive(checkpoint);
  auto stored = config_from_json(nlohmann::json::parse(read_stored_string(archive, "config")),
                                 run.path("last.pt"));
  if (run.options.override_limits) {
    const auto& given = run.options.config.train;
    stored.train.max_steps = given.max_steps;
    stored.train.max_epochs = given.max_epochs;
    stored.train.max_time_minutes = given.max_time_minutes;
  }
  run.config = stored;
  auto loaded = load_model(checkpoint, run.device);
  for (const auto& [spm, stored_tokenizer, side] :
       {std::tuple{run.options.source_spm, &loaded.source_tokenizer, "source"},
        std::tuple{run.options.target_spm, &loaded.target_tokenizer, "target"}}) {
    if (!spm.empty() && Tokenizer::from_file(spm).serialized() != stored_tokenizer->serialized())
      throw Error(std::string("the ") + side + " tokenizer " + spm +
                  " differs from the one in " + run.path("last.pt") + " being resumed");
  }
  run.source_tokenizer = loaded.source_tokenizer;
  run.target_tokenizer = loaded.target_tokenizer;
  run.model = loaded.model;
  run.model->train();
  make_optimizer(run);
  restore(run, archive);
}

// Only rank 0 reads the model directory (the others may be on machines that cannot see
// it): its last.pt travels to the other ranks, which load it from a private temp file.
void resume(Run& run) {
  if (!run.is_main()) {
    const auto bytes = run.group->broadcast_bytes("");
    const auto copy = (std::filesystem::temp_directory_path() /
                       ("nmt-resume-rank" + std::to_string(run.group->rank()) + "-" + std::to_string(::getpid()) + ".pt"))
                          .string();
    { std::ofstream(copy, std::ios::binary) << bytes; }
    try {
      load_for_resume(run, copy);
    } catch (...) {
      std::filesystem::remove(copy);
      throw;
    }
    std::filesystem::remove(copy);
    return;
  }
  if (run.group->world_size() > 1) run.group->broadcast_bytes(read_file(run.path("last.pt"), "checkpoint"));
  load_for_resume(run, run.path("last.pt"));
}

void start_fresh(Run& run) {
  if (run.options.source_spm.empty() || run.options.target_spm.empty())
    throw Error("--src-spm and --tgt-spm are required for a new training run");
  run.source_tokenizer = Tokenizer::from_file(run.options.source_spm);
  run.target_tokenizer = Tokenizer::from_file(run.options.target_spm);
  run.config = run.options.config;
  run.config.model.source_vocab = run.source_tokenizer->vocab_size();
  run.config.model.target_vocab = run.target_tokenizer->vocab_size();
  run.config.validate();
  torch::manual_seed(static_cast<uint64_t>(run.config.train.seed));
  run.model = build_model(run.config.model);
  run.model->to(run.device);
  run.model->train();
  make_optimizer(run);
}

void load_data(Run& run) {
  const auto& o = run.options;
  const auto max_length = static_cast<size_t>(run.config.train.max_length);
  const auto train_corpus = read_parallel_corpus(o.train_source, o.train_target);
  run.train = encode_parallel_corpus(train_corpus, *run.source_tokenizer, *run.target_tokenizer, max_length);
  run.log->message(describe(train_corpus, run.train, o.train_source, o.train_target, max_length));
  if (run.train.source.empty()) throw Error("no usable training pairs in " + o.train_source);
  if (!run.is_main()) return;  // only rank 0 validates
  const auto valid_corpus = read_parallel_corpus(o.valid_source, o.valid_target);
  run.valid.encoded = encode_parallel_corpus(valid_corpus, *run.source_tokenizer, *run.target_tokenizer, 0);
  run.valid.references = valid_corpus.target;
  run.log->message(describe(valid_corpus, run.valid.encoded, o.valid_source, o.valid_target, 0));
  if (run.valid.encoded.source.empty()) throw Error("no usable validation pairs in " + o.valid_source);
}

void set_learning_rate(torch::optim::Adam& optimizer, double rate) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(rate);
}

uint64_t fingerprint(const std::string& bytes) {
  uint64_t hash = 1469598103934665603ULL;  // FNV-1a: the same on every machine
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ULL;
  return hash;
}

// A distributed run goes wrong silently when the ranks train on different data; check
// what can be checked, then give every rank rank 0's parameters.
void synchronise_ranks(Run& run) {
  auto& group = *run.group;
  if (group.world_size() == 1) return;
  group.check_same(static_cast<int64_t>(fingerprint(config_to_json(run.config).dump())), "the config");
  group.check_same(static_cast<int64_t>(fingerprint(run.source_tokenizer->serialized() +
                                                    run.target_tokenizer->serialized())), "the tokenizers");
  uint64_t corpus_tokens = 0;  // wraps around on huge corpora, which is fine for a check
  for (size_t i = 0; i < run.train.source.size(); ++i)
    corpus_tokens += run.train.source[i].size() * 1000003ULL + run.train.target[i].size();
  group.check_same(static_cast<int64_t>(run.train.source.size()), "the number of training pairs");
  group.check_same(static_cast<int64_t>(corpus_tokens), "the training corpus (token counts differ)");
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

// One update over this rank's share of the batches (`accumulate` per rank); returns the
// loss and target tokens summed over all ranks. Each rank divides by the global token
// count, so the summed gradients equal one process training on all the batches.
std::pair<double, int64_t> update(Run& run, const std::vector<Batch>& batches) {
  int64_t local_tokens = 0;
  for (const auto& batch : batches) local_tokens += batch.target_tokens;
  const auto tokens = static_cast<int64_t>(run.group->sum(static_cast<double>(local_tokens)));
  double loss_sum = 0;
  for (const auto& batch : batches) {
    const auto logits = run.model->forward(batch.source.to(run.device), batch.target_input.to(run.device)).logits;
    auto sums = label_smoothed_loss(logits, batch.target_output.to(run.device), run.config.train.label_smoothing);
    (sums.loss / static_cast<double>(tokens)).backward();
    loss_sum += sums.loss.item<double>();
  }
  loss_sum = run.group->sum(loss_sum);
  if (!std::isfinite(loss_sum))
    throw Error("training loss became " + std::to_string(loss_sum) + " at step " +
                std::to_string(run.progress.step + 1) +
                "; lower train.learning_rate or raise train.warmup_steps (last.pt keeps the last good state)");
  sum_gradients(run);
  if (run.config.train.clip_norm > 0)
    torch::nn::utils::clip_grad_norm_(run.model->parameters(), run.config.train.clip_norm);
  set_learning_rate(*run.optimizer, run.schedule->rate(run.progress.step + 1));
  run.optimizer->step();
  run.optimizer->zero_grad();
  ++run.progress.step;
  return {loss_sum, tokens};
}

// Validates, saves best/last, and returns true when early stopping says stop.
bool validate_and_checkpoint(Run& run) {
  const auto& t = run.config.train;
  const auto result = validate(*run.model, run.valid, *run.target_tokenizer, t.batch_tokens,
                               t.valid_max_sentences, run.device);
  const double metric = t.metric == "bleu" ? result.bleu : t.metric == "chrf" ? result.chrf : -result.loss;
  auto& p = run.progress;
  const bool improved = !p.has_best || metric > p.best_metric;
  if (improved) {
    p.best_metric = metric, p.has_best = true, p.bad_validations = 0;
    save(run, "best.pt", false);
  } else {
    ++p.bad_validations;
  }
  run.schedule->on_validation(improved);
  run.log->validation(p.step, result, improved);
  if (t.keep_last > 0) {
    save(run, "step-" + std::to_string(p.step) + ".pt", false);
    const auto old = run.path("step-" + std::to_string(p.step - t.keep_last * t.valid_every) + ".pt");
    std::filesystem::remove(old);
  }
  save(run, "last.pt", true);
  return t.patience > 0 && p.bad_validations >= t.patience;
}

}  // namespace

TrainingResult train(const TrainerOptions& options) {
  Run run;
  run.options = options;
  run.device = parse_device(options.device);
  if (options.distributed.enabled() && !run.device.is_cpu())
    throw Error("distributed training runs on CPU (Gloo) only: this LibTorch has no NCCL for " + options.device);
  run.group = std::make_unique<ProcessGroup>(options.distributed);
  if (run.is_main()) std::filesystem::create_directories(options.model_dir);
  const bool resuming = run.group->max(run.is_main() && std::filesystem::exists(run.path("last.pt"))) != 0;
  if (options.resume && !resuming) throw Error("--resume: no " + run.path("last.pt") + " to resume from");
  run.log = std::make_unique<TrainingLog>(run.is_main() ? run.path("train.jsonl") : "",
                                          options.quiet || !run.is_main());
  if (resuming) {
    resume(run);
    run.log->message("resuming from " + run.path("last.pt") + " at step " + std::to_string(run.progress.step));
  } else {
    start_fresh(run);
  }
  run.log->config(run.config, run.model->parameters());
  if (run.is_main())
    write_file_atomically(run.path("config.json"), config_to_json(run.config).dump(2) + "\n");
  load_data(run);
  synchronise_ranks(run);

  stop_signal = 0;
  auto previous_int = std::signal(SIGINT, on_signal);
  auto previous_term = std::signal(SIGTERM, on_signal);
  TrainingLoop loop(run.config.train, run.progress.elapsed_seconds, run.progress.step, run.progress.epoch);
  TrainingResult result;
  const auto& t = run.config.train;
  const auto rank = static_cast<int64_t>(run.group->rank());
  const int64_t batches_per_update = t.accumulate * run.group->world_size();
  int64_t agreed_signal = 0;
  while (result.stop_reason.empty()) {
    const auto batches = make_batches(run.train, t.batch_tokens,
                                      static_cast<uint64_t>(t.seed) * 1000003ULL + run.progress.epoch, true);
    const auto count = static_cast<int64_t>(batches.size());
    auto& p = run.progress;
    while (p.batch_in_epoch < count && result.stop_reason.empty()) {
      // Every rank sees the same batch order; rank r takes its `accumulate` batches of the update.
      const int64_t update_end = std::min(p.batch_in_epoch + batches_per_update, count);
      std::vector<Batch> group;
      for (int64_t b = p.batch_in_epoch + rank * t.accumulate;
           b < std::min(p.batch_in_epoch + (rank + 1) * t.accumulate, update_end); ++b)
        group.push_back(collate(run.train, batches[b]));
      p.batch_in_epoch = update_end;
      const auto [loss, tokens] = update(run, group);
      result.last_train_loss = loss / static_cast<double>(tokens);
      loop.count(tokens, loss);
      p.elapsed_seconds = loop.elapsed_seconds();
      const double epoch_fraction = p.epoch + double(p.batch_in_epoch) / double(count);
      if (p.step % t.log_every == 0)
        run.log->progress(p.step, epoch_fraction, loop, run.schedule->rate(p.step));
      bool stop_early = false;
      if (p.step % t.valid_every == 0) {
        if (run.is_main()) stop_early = validate_and_checkpoint(run);
        share_validation_outcome(run);
      }
      // Rank 0 decides (time limits differ by rank); a signal to any rank stops them all.
      agreed_signal = run.group->max(stop_signal);
      result.stop_reason = run.group->broadcast_bytes(
          run.is_main() ? loop.stop_reason(p.step, epoch_fraction, stop_early, static_cast<int>(agreed_signal)) : "");
    }
    if (p.batch_in_epoch >= count) {
      ++p.epoch, p.batch_in_epoch = 0;
      if (result.stop_reason.empty() && t.max_epochs > 0 && p.epoch >= t.max_epochs)
        result.stop_reason = "reached max_epochs";
    }
  }
  // A signal asks for a quick exit: save where we are, skip the final validation.
  if (run.is_main()) {
    if (agreed_signal == 0 && run.progress.step % t.valid_every != 0) validate_and_checkpoint(run);
    else save(run, "last.pt", true);
  }
  run.group->wait_for_main();  // the other ranks finish only once rank 0 has saved
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  result.steps = run.progress.step;
  result.epochs_completed = run.progress.epoch;
  result.best_metric = run.progress.best_metric;
  result.model = run.model;
  run.log->message("stopped: " + result.stop_reason + "; checkpoints in " + options.model_dir);
  return result;
}

}  // namespace nmt
