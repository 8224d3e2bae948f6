// nmt-train's command line (apps/nmt-train.cpp calls run): trains a translation model on a parallel corpus.
#include "nmt/tools/tools.h"

#include <algorithm>
#include <iostream>

#include "nmt/base/process_setup.h"
#include "nmt/base/cli.h"
#include "nmt/base/config.h"
#include "nmt/models/compute_description.h"
#include "nmt/models/registry.h"
#include "nmt/training/config_check.h"
#include "nmt/training/trainer.h"

namespace nmt::tools::train_tool {

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Train a GRU, attention or Transformer translation model", "nmt-train"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  nmt::TrainerOptions options;
  std::string config_path, arch;
  std::vector<std::string> overrides;
  int64_t max_steps = -1, max_epochs = -1, seed = -1;
  double max_time = -1;
  app.add_option("--config", config_path, "JSON config (configs/*.json); flags override it")
      ->check(CLI::ExistingFile);
  auto* train_source = app.add_option("--train-src", options.train_source,
                                      "Training source text (prepared into --data-cache on the first start, "
                                      "reused on later starts and resumes)");
  auto* train_target = app.add_option("--train-tgt", options.train_target, "Training target text");
  auto* train_data = app.add_option("--train-data", options.train_data,
                                    "A prepared corpus (nmt-prepare) instead of --train-src/--train-tgt")
                         ->check(CLI::ExistingFile);
  train_source->needs(train_target)->excludes(train_data);
  train_target->needs(train_source)->excludes(train_data);
  app.add_option("--data-cache", options.data_cache,
                 "Where raw training and validation text is prepared (tokenized once) and found again; "
                 "default MODEL_DIR/data-cache, which goes with the run. Share one directory between runs "
                 "on the same data to prepare it once");
  app.add_option("--valid-src", options.valid_source, "Validation source text")->required();
  app.add_option("--valid-tgt", options.valid_target, "Validation target text")->required();
  app.add_option("--src-spm", options.source_spm, "Source SentencePiece model (nmt-spm-train)");
  app.add_option("--tgt-spm", options.target_spm, "Target SentencePiece model (may be the same file)");
  app.add_option("--model-dir", options.model_dir, "Where checkpoints and logs go")->required();
  std::string families = "Model family (overrides model.arch):";
  for (const auto& family : nmt::model_families()) families += "\n  " + family.name + ": " + family.description;
  app.add_option("--arch", arch, families)->check(CLI::IsMember(nmt::model_family_names()));
  app.add_option("--max-steps", max_steps, "Stop after N updates (train.max_steps)");
  app.add_option("--max-epochs", max_epochs, "Stop after N epochs (train.max_epochs)");
  app.add_option("--max-time", max_time, "Stop after MINUTES of training (train.max_time_minutes)");
  app.add_option("--seed", seed, "Random seed (train.seed)");
  app.add_option("--device", options.device, "cpu, cuda (the current GPU) or cuda:N")->capture_default_str();
  app.add_flag("--resume", options.resume,
               "Continue from MODEL_DIR/last.pt (also automatic when it exists). A resumed run keeps its stored "
               "config: limits given here (--max-steps, --max-epochs, --max-time) replace just those; any other "
               "change (--config, --set, --arch, --seed differing from the stored config) is an error");
  app.add_option("--init-from", options.init_from,
                 "Fine-tune: start from this checkpoint's weights, architecture and tokenizers (a differing model "
                 "section is an error; model.dropout may change), with this run's train section and a fresh "
                 "optimizer, schedule, step count and best score. Into a new --model-dir")
      ->check(CLI::ExistingFile)
      ->excludes("--resume");
  app.add_option("--set", overrides,
                 "Override any config field: section.key=value, e.g. train.learning_rate=0.001 or "
                 "model.transformer.d_model=512 (repeatable)");
  app.add_flag("--quiet", options.quiet, "No progress on stderr (train.jsonl still has it)");
  nmt::cli::add_progress_every(app, options.progress_every_seconds,
                                "steps, between the train.log_every lines; sentences of a validation");
  bool verbose = false;
  nmt::cli::add_verbose_option(app, verbose);
  // Data-parallel training; the flags override RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
  int world_size = -1, rank = -1, master_port = -1;
  std::string master_addr;
  double dist_timeout = 600;
  const std::string group = "Distributed (flags override the torchrun variables RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)";
  app.add_option("--world-size", world_size, "Number of training processes (WORLD_SIZE)")->group(group);
  app.add_option("--rank", rank, "This process's rank, 0..world-size-1 (RANK); rank 0 writes the model dir")->group(group);
  app.add_option("--master-addr", master_addr, "Address of rank 0 (MASTER_ADDR, default 127.0.0.1)")->group(group);
  app.add_option("--master-port", master_port, "Rendezvous port on rank 0 (MASTER_PORT, default 29500)")->group(group);
  app.add_option("--dist-timeout", dist_timeout,
                 "Seconds before a rank that never joins or stops answering fails the run "
                 "(the others wait 10x this for rank 0's validation)")
      ->group(group)
      ->capture_default_str();
  app.callback([&] {  // during parsing: a usage error (exit 2)
    if (options.train_source.empty() && options.train_data.empty())
      throw CLI::RequiredError("--train-src and --train-tgt, or --train-data,");
  });
  return nmt::cli::run(app, common, argc, argv, [&] {
    options.prepare_threads = nmt::cli::apply_threads(common.threads);
    auto config = config_path.empty() ? nmt::Config{} : nmt::load_config(config_path);
    if (!arch.empty()) config.model.arch = arch;
    for (const auto& assignment : overrides) nmt::apply_override(config, assignment);
    if (max_steps >= 0) config.train.max_steps = max_steps;
    if (max_epochs >= 0) config.train.max_epochs = max_epochs;
    if (max_time >= 0) config.train.max_time_minutes = max_time;
    if (seed >= 0) config.train.seed = seed;
    if (max_steps >= 0) options.max_steps = max_steps;
    if (max_epochs >= 0) options.max_epochs = max_epochs;
    if (max_time >= 0) options.max_time_minutes = max_time;
    options.config_given = !config_path.empty() || !arch.empty() || !overrides.empty() || seed >= 0;
    options.model_config_given =
        !config_path.empty() || !arch.empty() ||
        std::any_of(overrides.begin(), overrides.end(), [](const std::string& o) { return o.rfind("model.", 0) == 0; });
    auto& distributed = options.distributed;
    distributed = nmt::distributed_options_from_environment();
    if (world_size >= 0) distributed.world_size = world_size;
    if (rank >= 0) distributed.rank = rank;
    if (master_port >= 0) distributed.master_port = master_port;
    if (!master_addr.empty()) distributed.master_addr = master_addr;
    distributed.timeout_seconds = dist_timeout;
    distributed.validate();
    nmt::check_config(config);
    options.config = config;
    if (verbose)
      options.on_model_ready = [&](const nmt::Seq2SeqModel& model) { nmt::cli::print_verbose(app, nmt::describe_compute(model)); };
    const auto result = nmt::train(options);
    if (distributed.rank != 0) return 0;  // rank 0 reports for the run
    std::cout << "steps " << result.steps << ", last training loss " << result.last_train_loss
              << ", stopped: " << result.stop_reason << std::endl;
    return 0;
  });
}

}  // namespace nmt::tools::train_tool
