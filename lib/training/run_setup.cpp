// Starting a run: fresh or resumed from last.pt, the data, and checkpoint writing.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/registry.h"
#include "nmt/training/config_check.h"
#include "run.h"

namespace nmt::training_run {

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

namespace {

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

}  // namespace

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
  check_config(run.config);
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

}  // namespace nmt::training_run
