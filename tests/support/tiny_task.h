#pragma once
// A tiny translation task for trainer, checkpoint and translator tests: the first lines
// of the bundled number-words data, a small joint tokenizer and a small config.
#include <torch/torch.h>

#include <fstream>
#include <string>
#include <vector>

#include "nmt/models/checkpoint.h"
#include "nmt/base/config.h"
#include "nmt/models/registry.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/text/tokenizer.h"
#include "nmt/training/trainer.h"
#include "support/test_util.h"

namespace nmt::test {

inline void copy_head(const std::string& from, const std::string& to, int lines) {
  std::ifstream in(from);
  std::ofstream out(to);
  std::string line;
  for (int i = 0; i < lines && std::getline(in, line); ++i) out << line << '\n';
}

/// Writes train/valid files and spm.model into `dir`.
inline void make_tiny_task(const ScratchDir& dir, int train_lines = 300) {
  copy_head(source_path("data/numbers/train.en"), dir.file("train.en"), train_lines);
  copy_head(source_path("data/numbers/train.de"), dir.file("train.de"), train_lines);
  copy_head(source_path("data/numbers/valid.en"), dir.file("valid.en"), 20);
  copy_head(source_path("data/numbers/valid.de"), dir.file("valid.de"), 20);
  TokenizerTrainOptions spm;
  spm.inputs = {dir.file("train.en"), dir.file("train.de")};
  spm.model_prefix = dir.file("spm");
  spm.vocab_size = 60;
  spm.model_type = "bpe";
  train_tokenizer(spm);
}

/// A second tokenizer, unlike spm.model (trained on train.de alone), written to DIR/other.model:
/// for the checks that refuse models or runs whose tokenizers differ.
inline Tokenizer other_tokenizer(const ScratchDir& dir) {
  TokenizerTrainOptions spm;
  spm.inputs = {dir.file("train.de")};
  spm.model_prefix = dir.file("other");
  spm.vocab_size = 60;
  spm.model_type = "bpe";
  train_tokenizer(spm);
  return Tokenizer::from_file(dir.file("other.model"));
}

/// Marian's choices (docs/marian.md): what a Transformer needs to export to Marian.
inline void use_marian_choices(TransformerConfig& x) {
  x.norm = "post", x.positions = "concatenated", x.decoder_start = "zeros", x.layer_norm_epsilon = 1e-6;
}

/// A small model of the given family that trains in seconds.
inline Config tiny_config(const std::string& arch) {
  Config config;
  auto& m = config.model;
  m.arch = arch;
  auto& r = m.section<RnnConfig>();
  r.embedding_dim = 16, r.hidden_dim = 32;
  auto& x = m.section<TransformerConfig>();
  x.d_model = 32, x.heads = 2, x.ffn_dim = 64, x.encoder_layers = 2, x.decoder_layers = 2;
  m.dropout = 0.1;  // on, so that resuming must restore the random state too
  auto& t = config.train;
  t.batch_tokens = 300;
  t.learning_rate = 3e-3;
  t.schedule = "constant";
  t.valid_every = 5;
  t.log_every = 1000;
  t.valid_max_sentences = 5;
  t.max_steps = 10;
  t.seed = 7;
  return config;
}

/// The registered families whose models have attention (StepOutput::attention), asked of a
/// small model of each: tests of attention go over these, not over a list of names.
inline std::vector<std::string> families_with_attention() {
  std::vector<std::string> names;
  for (const auto& name : model_family_names()) {
    auto config = tiny_config(name).model;
    config.source_vocab = config.target_vocab = 8;
    if (build_model(config)->has_attention()) names.push_back(name);
  }
  return names;
}

/// The tiny Transformer without dropout, so that runs with different numbers of processes
/// can be compared (tests/training/test_distributed.cpp and its worker).
inline Config deterministic_tiny_config() {
  auto config = tiny_config("transformer");
  config.model.dropout = config.model.section<TransformerConfig>().attention_dropout = 0;
  config.train.valid_every = 3;
  // Reduce-on-plateau with patience 1: the learning rate changes after a validation that
  // did not improve (likely within a few steps), and only rank 0 validates.
  config.train.schedule = "plateau";
  config.train.plateau_patience = 1;
  return config;
}

/// An untrained tiny model with the task's tokenizer on both sides, in eval mode. Enough
/// wherever a result must not depend on quality (batching, export format).
inline LoadedModel random_model(const ScratchDir& dir, const std::string& arch, uint64_t seed) {
  auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  auto config = tiny_config(arch);
  config.model.source_vocab = config.model.target_vocab = tokenizer.vocab_size();
  torch::manual_seed(seed);
  LoadedModel loaded{config, build_model(config.model), tokenizer, tokenizer};
  loaded.model->eval();
  return loaded;
}

/// Trainer options for the task written by make_tiny_task into `dir`.
inline TrainerOptions tiny_trainer_options(const std::string& dir, const Config& config, const std::string& model_dir) {
  const auto file = [&](const std::string& name) { return dir + "/" + name; };
  TrainerOptions options;
  options.config = config;
  options.train_source = file("train.en"), options.train_target = file("train.de");
  options.valid_source = file("valid.en"), options.valid_target = file("valid.de");
  options.source_spm = options.target_spm = file("spm.model");
  options.model_dir = file(model_dir);
  options.quiet = true;
  return options;
}

inline TrainerOptions tiny_trainer_options(const ScratchDir& dir, const Config& config, const std::string& model_dir) {
  return tiny_trainer_options(dir.path().string(), config, model_dir);
}

}  // namespace nmt::test
