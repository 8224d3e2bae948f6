// Starting a run: fresh or resumed from last.pt, the data, and checkpoint writing.
#include <filesystem>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/base/new_directories.h"
#include "nmt/models/checkpoint.h"
#include "nmt/models/registry.h"
#include "nmt/decoding/translator.h"
#include "nmt/text/batching.h"
#include "nmt/text/corpus_cache.h"
#include "nmt/text/parallel_lines.h"
#include "nmt/text/piece_counts.h"
#include "nmt/training/config_check.h"
#include "run.h"

namespace nmt::training_run {

void TrainingRun::save(const std::string& name, bool with_training_state) {
  torch::serialize::OutputArchive state;
  if (with_training_state) {
    torch::serialize::OutputArchive optimizer;
    optimizer_->save(optimizer);
    state.write("optimizer", optimizer);
    state_.random = RandomStreams::capture(device_);
    state_.save(state);
  }
  save_checkpoint(path(name), config_, *model_, *source_tokenizer_, *target_tokenizer_,
                  with_training_state ? &state : nullptr, state_.step, source_piece_counts_);
}

void TrainingRun::restore(torch::serialize::InputArchive& archive, const std::string& path) {
  torch::serialize::InputArchive state, optimizer;
  archive.read("training", state);
  state.read("optimizer", optimizer);
  optimizer_->load(optimizer);
  state_ = TrainingState::load(state, path);
  if (!state_.random.apply(device_))
    log_->message(path + " holds no GPU random state (saved on the CPU): dropout on " + device_.str() +
                  " starts a new stream");
}

namespace {

std::string read_stored_string(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  return value.toStringRef();
}

}  // namespace

void TrainingRun::make_optimizer() {
  const auto& t = config_.train;
  optimizer_ = std::make_unique<FusedAdam>(
      model_->parameters(), torch::optim::AdamOptions(t.learning_rate)
                                   .betas({t.adam_beta1, t.adam_beta2})
                                   .eps(t.adam_eps)
                                   .weight_decay(t.weight_decay));
  learning_rate_ = std::make_unique<LearningRateSchedule>(t);
}

namespace {

void collect_differences(const nlohmann::json& first, const nlohmann::json& second, const std::string& prefix,
                         std::vector<ConfigDifference>& out) {
  for (const auto& item : first.items()) {
    const auto key = prefix.empty() ? item.key() : prefix + "." + item.key();
    const auto& other = second.contains(item.key()) ? second[item.key()] : nlohmann::json();
    if (item.value().is_object() && other.is_object()) collect_differences(item.value(), other, key, out);
    else if (item.value() != other) out.push_back({key, item.value().dump(), other.dump()});
  }
}

// A resumed run continues the stored config; a different one on the command line would
// otherwise be silently ignored. Limits and vocabulary sizes are not compared.
void refuse_config_changes(const Config& stored, Config given, const std::string& checkpoint) {
  given.model.source_vocab = stored.model.source_vocab;
  given.model.target_vocab = stored.model.target_vocab;
  given.train.max_steps = stored.train.max_steps;
  given.train.max_epochs = stored.train.max_epochs;
  given.train.max_time_minutes = stored.train.max_time_minutes;
  const auto list = config_differences(stored, given);
  if (list.empty()) return;
  throw Error("resuming from " + checkpoint + " keeps its stored config, but the command line changes " + list +
              "; use a new --model-dir for a different config, or resume with only limit flags");
}

}  // namespace

// Resuming: the stored config wins, except the limits given on this command line.
// `checkpoint` holds last.pt's bytes (rank 0's, on every rank).
void TrainingRun::load_for_resume(const std::string& checkpoint) {
  auto archive = checkpoint_archive(checkpoint, path("last.pt"));
  auto stored = config_from_json(nlohmann::json::parse(read_stored_string(archive, "config")),
                                 path("last.pt"));
  if (options_.config_given) refuse_config_changes(stored, options_.config, path("last.pt"));
  const auto& o = options_;
  if (o.max_steps) stored.train.max_steps = *o.max_steps;
  if (o.max_epochs) stored.train.max_epochs = *o.max_epochs;
  if (o.max_time_minutes) stored.train.max_time_minutes = *o.max_time_minutes;
  config_ = stored;
  auto loaded = load_model(archive, path("last.pt"), device_);
  refuse_other_tokenizers(options_, loaded, path("last.pt") + " being resumed");
  source_tokenizer_ = loaded.source_tokenizer;
  target_tokenizer_ = loaded.target_tokenizer;
  model_ = loaded.model;
  model_->train();
  make_optimizer();
  restore(archive, path("last.pt"));
}

std::vector<ConfigDifference> differing_keys(const nlohmann::json& first, const nlohmann::json& second) {
  std::vector<ConfigDifference> differences;
  collect_differences(first, second, "", differences);
  return differences;
}

std::string config_differences(const Config& stored, const Config& given) {
  std::string list;
  for (const auto& d : differing_keys(config_to_json(stored), config_to_json(given)))
    list += (list.empty() ? "" : ", ") + d.key + " (stored " + d.first + ", given " + d.second + ")";
  return list;
}

void refuse_other_tokenizers(const TrainerOptions& options, const LoadedModel& loaded, const std::string& checkpoint) {
  for (const auto& [spm, stored_tokenizer, side] :
       {std::tuple{options.source_spm, &loaded.source_tokenizer, "source"},
        std::tuple{options.target_spm, &loaded.target_tokenizer, "target"}}) {
    if (!spm.empty() && Tokenizer::from_file(spm).serialized() != stored_tokenizer->serialized())
      throw Error(std::string("the ") + side + " tokenizer " + spm + " differs from the one in " + checkpoint);
  }
}

std::string TrainingRun::checkpoint_bytes_on_every_rank(const std::string& path) {
  if (!is_main()) return group_->broadcast_bytes("");
  if (std::filesystem::is_directory(path)) throw Error(path + " is a directory, not a model file");
  auto bytes = read_file(path, "checkpoint");
  if (group_->world_size() > 1) group_->broadcast_bytes(bytes);
  return bytes;
}

// Only rank 0 reads the model directory (the others may be on machines that cannot see
// it): its last.pt travels to the other ranks, which load it from memory (no temp file).
void TrainingRun::resume() { load_for_resume(checkpoint_bytes_on_every_rank(path("last.pt"))); }

bool TrainingRun::best_needs_repair() {
  const auto& p = state_;
  // last.pt is written before best.pt: a kill between the two leaves last.pt saying
  // that the weights it holds are the best, and best.pt older.
  if (!p.has_best || p.best_step != p.step) return false;
  if (!std::filesystem::exists(path("best.pt"))) return true;
  try {
    auto archive = read_checkpoint_archive(path("best.pt"));
    return checkpoint_step(archive) != p.step;
  } catch (const Error&) {
    return true;  // a damaged best.pt is rewritten from the same weights
  }
}

void TrainingRun::start_fresh() {
  if (options_.source_spm.empty() || options_.target_spm.empty())
    throw Error("--src-spm and --tgt-spm are required for a new training run");
  source_tokenizer_ = Tokenizer::from_file(options_.source_spm);
  target_tokenizer_ = Tokenizer::from_file(options_.target_spm);
  config_ = options_.config;
  config_.model.source_vocab = source_tokenizer_->vocab_size();
  config_.model.target_vocab = target_tokenizer_->vocab_size();
  check_config(config_);
  torch::manual_seed(static_cast<uint64_t>(config_.train.seed));
  model_ = build_model(config_.model);
  model_->to(device_);
  model_->train();
  make_optimizer();
}

std::string TrainingRun::cache_directory() {
  return options_.data_cache.empty() ? path("data-cache") : options_.data_cache;
}

std::shared_ptr<const PreparedCorpus> TrainingRun::open_raw_pair(const std::string& source, const std::string& target,
                                                   const std::string& role) {
  CorpusCacheRequest request;
  request.source_path = source;
  request.target_path = target;
  request.source_tokenizer = &*source_tokenizer_;
  request.target_tokenizer = &*target_tokenizer_;
  request.cache_dir = cache_directory();
  request.role = role;
  request.threads = std::max(1, options_.prepare_threads);
  request.log = [this](const std::string& line) { log_->message(line); };
  return open_cached_corpus(request);
}

// A prepared file given by the user: the tokenizers must be the ones it was made with, and
// sources that still exist must not have changed since (they may be gone: that is fine).
std::shared_ptr<const PreparedCorpus> TrainingRun::open_given(const std::string& path) {
  auto corpus = PreparedCorpus::open(path);
  const auto& info = corpus->info();
  auto why = tokenizer_mismatch_reason(info, *source_tokenizer_, *target_tokenizer_);
  for (const auto* recorded : {&info.source, &info.target})
    if (why.empty() && std::filesystem::exists(recorded->path))
      why = source_change(*recorded, describe_source(recorded->path));
  if (!why.empty()) throw Error("cannot train on " + path + ": " + why + "; prepare it again (nmt-prepare)");
  log_->message("using the prepared corpus " + path + " (made from " +
                parallel_files_name(info.source.path, info.target.path) + ")");
  return corpus;
}

// The validation set in memory, as today: only the pairs the model can take, and their raw
// reference lines.
void TrainingRun::load_validation() {
  const auto& o = options_;
  const auto prepared = open_raw_pair(o.valid_source, o.valid_target, "valid");
  // A model with a position limit can neither score nor translate longer pairs.
  const auto limit = static_cast<size_t>(input_token_limit(*model_, SearchOptions{}, 0));
  const auto raw_references = read_text_lines(o.valid_target);
  auto& encoded = valid_.encoded;
  encoded.empty_skipped = static_cast<long>(prepared->info().empty_skipped);
  std::vector<int> source, target;
  for (size_t pair = 0; pair < prepared->size(); ++pair) {
    const auto line = prepared->line_number(pair);
    if (limit > 0 && (prepared->source_length(pair) > limit || prepared->target_length(pair) > limit)) {
      ++encoded.too_long_skipped;
      continue;
    }
    prepared->read(pair, source, target);
    encoded.source.push_back(source);
    encoded.target.push_back(target);
    encoded.line_numbers.push_back(static_cast<long>(line));
    valid_.references.push_back(raw_references.at(line - 1));
    valid_.normalised_references.push_back(target_tokenizer_->decode(target));
  }
  std::string line = "validation: " + std::to_string(prepared->info().total_lines) + " lines from " +
                     parallel_files_name(o.valid_source, o.valid_target) + ": kept " + std::to_string(encoded.size()) +
                     ", skipped " + std::to_string(encoded.empty_skipped) + " empty";
  if (limit > 0) line += ", " + std::to_string(encoded.too_long_skipped) + " over the model's " + std::to_string(limit) + " positions";
  log_->message(line);
  if (encoded.source.empty()) throw Error("no usable validation pairs in " + o.valid_source);
}

void TrainingRun::load_training_corpus() {
  const auto& o = options_;
  train_ = o.train_data.empty() ? open_raw_pair(o.train_source, o.train_target, "train")
                                   : open_given(o.train_data);
  const auto& info = train_->info();
  const auto max_length = static_cast<size_t>(config_.train.max_length);
  const auto usable = count_within(*train_, max_length);
  std::string line = "training corpus: " + std::to_string(info.total_lines) + " lines, " +
                     std::to_string(info.pairs) + " pairs (skipped " + std::to_string(info.empty_skipped) +
                     " empty, " + std::to_string(info.too_long_skipped) + " over " +
                     std::to_string(kMaxPreparedTokens) + " tokens)";
  if (max_length > 0)
    line += "; " + std::to_string(usable) + " within train.max_length " + std::to_string(max_length) + " (" +
            std::to_string(info.pairs - usable) + " left out)";
  log_->message(line);
  if (usable == 0) throw Error("no usable training pairs in " + (o.train_data.empty() ? o.train_source : o.train_data));
  if (is_main()) source_piece_counts_ = count_source_pieces(*train_, source_tokenizer_->vocab_size());
}

void TrainingRun::load_data() {
  // A start that fails on its inputs leaves no directory behind: the cache directories
  // this start creates go again, with what was prepared in them, if anything fails.
  const NewDirectories created(cache_directory());
  try {
    if (is_main()) load_validation();  // first: small, and only rank 0 validates
    load_training_corpus();
  } catch (...) {
    created.remove_all();
    throw;
  }
}

}  // namespace nmt::training_run
