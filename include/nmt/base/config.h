#pragma once
// One configuration struct for model and training. Loaded from JSON (configs/*.json),
// overridden by flags, and stored inside every checkpoint, so a model file describes
// itself. Every field has a default and a one-line comment.
//
// Each model family's own settings are a section of the model config (model.rnn,
// model.transformer, ...) that the family defines and registers beside itself
// (config_section.h): this layer knows none of them. Configs and checkpoints written before
// the sections existed, with those keys directly under "model", still load (the old keys are
// moved into their sections).
//
// validate() checks what this layer knows: the range of every number field, the sections'
// too (each field lists its range where it is listed: `visit`, config_fields.h). The names
// that are registries' business (model.arch, train.metric) and each family's own rules are
// checked by training/config_check.h and models/registry.h.
#include <nlohmann/json.hpp>

#include <string>

#include "nmt/base/config_fields.h"
#include "nmt/base/config_section.h"

namespace nmt {

struct ModelConfig {
  std::string arch = "transformer";  ///< a registered model family (nmt-train --help lists them)
  int64_t source_vocab = 0;          ///< set from the source tokenizer
  int64_t target_vocab = 0;          ///< set from the target tokenizer
  double dropout = 0.1;              ///< dropout on embeddings and between layers
  ConfigSections sections;           ///< each family's settings: model.<section> (config_section.h)

  /// The family settings T (e.g. TransformerConfig): as set, or its defaults.
  template <typename T>
  T& section() { return sections.get<T>(); }
  template <typename T>
  const T& section() const { return sections.get<T>(); }

  template <typename V>
  void visit(V&& v) {  // the sections are read and written by the config code, by name
    v("arch", arch);
    v("source_vocab", source_vocab, kAtLeast0);  // 0 until the tokenizers set it
    v("target_vocab", target_vocab, kAtLeast0);
    v("dropout", dropout, kFraction);
  }
};

struct TrainConfig {
  int64_t batch_tokens = 4096;       ///< tokens per batch (max of source/target, padded)
  int64_t max_length = 100;          ///< pairs with more tokens on a side are left out of the batches
  int64_t accumulate = 1;            ///< gradient accumulation over this many batches
  bool overlap_allreduce = true;     ///< data-parallel on Gloo: sum each gradient bucket over the ranks
                                     ///< while backward computes the rest (false: after it)
  double allreduce_bucket_mb = 4;    ///< with overlap_allreduce: MiB of gradients summed in one collective
  std::string allreduce_precision = "fp32";  ///< with overlap_allreduce: fp32 (exact) | fp16 (half the bytes on
                                             ///< the wire, each bucket scaled by its previous sum; see
                                             ///< docs/distributed.md)
  double learning_rate = 5e-4;       ///< peak learning rate
  std::string schedule = "noam";     ///< constant | noam (inverse-sqrt warmup) | plateau
  int64_t warmup_steps = 4000;       ///< noam warmup
  double plateau_factor = 0.5;       ///< plateau: lr multiplier after a stall
  int64_t plateau_patience = 2;      ///< plateau: validations without improvement before decay
  double min_learning_rate = 1e-6;   ///< plateau: floor
  double adam_beta1 = 0.9;           ///< Adam beta1
  double adam_beta2 = 0.98;          ///< Adam beta2
  double adam_eps = 1e-9;            ///< Adam epsilon
  double weight_decay = 0.0;         ///< L2 penalty in Adam
  double clip_norm = 1.0;            ///< gradient clipping by global norm (0 = off)
  double label_smoothing = 0.1;      ///< label smoothing epsilon (spread over the ids that can be targets)
  std::string precision = "fp32";    ///< fp32 | bf16: mixed precision, the Linear layers' matrix products
                                     ///< in bfloat16 with fp32 weights, loss and optimiser (AVX512-BF16)
                                     ///< | auto: bf16 where the CPU has AVX512-BF16, else fp32
  int64_t max_steps = 0;             ///< stop after this many updates (0 = no limit)
  int64_t max_epochs = 0;            ///< stop after this many epochs (0 = no limit)
  double max_time_minutes = 0;       ///< stop after this wall time (0 = no limit)
  int64_t valid_every = 1000;        ///< validate every N updates
  int64_t log_every = 100;           ///< progress line every N updates
  int64_t patience = 0;              ///< early stop after N validations without improvement (0 = off)
  std::string metric = "bleu";       ///< a registered metric (nmt-eval --help lists them) or loss:
                                     ///< what decides `best` and early stopping
  int64_t keep_last = 0;             ///< also keep the last K step checkpoints (step-N.pt)
  int64_t average_last = 0;          ///< at the end, write averaged.pt: the mean of the newest m of the
                                     ///< last K step checkpoints, m in 1..K the best on validation
                                     ///< (needs keep_last >= K; 0 = off)
  int64_t save_every = 100;          ///< also write last.pt every N updates between validations (0 = off)
  int64_t valid_max_sentences = 0;   ///< translate only the first N validation sentences (0 = all)
  int64_t seed = 1;                  ///< data order, initialisation and dropout

  template <typename V>
  void visit(V&& v) {
    v("batch_tokens", batch_tokens, kAtLeast1);
    v("max_length", max_length, kAtLeast1);
    v("accumulate", accumulate, kAtLeast1);
    v("overlap_allreduce", overlap_allreduce);
    v("allreduce_bucket_mb", allreduce_bucket_mb, kAbove0);
    v("allreduce_precision", allreduce_precision);
    v("learning_rate", learning_rate, kAbove0);
    v("schedule", schedule);
    v("warmup_steps", warmup_steps, kAtLeast0);
    v("plateau_factor", plateau_factor, Interval{0, 1, true, true});  // 0 would stop learning, 1 never decays
    v("plateau_patience", plateau_patience, kAtLeast1);
    v("min_learning_rate", min_learning_rate, kAtLeast0);
    v("adam_beta1", adam_beta1, kFraction);
    v("adam_beta2", adam_beta2, kFraction);
    v("adam_eps", adam_eps, kAbove0);
    v("weight_decay", weight_decay, kAtLeast0);
    v("clip_norm", clip_norm, kAtLeast0);
    v("label_smoothing", label_smoothing, kFraction);
    v("precision", precision);
    v("max_steps", max_steps, kAtLeast0);
    v("max_epochs", max_epochs, kAtLeast0);
    v("max_time_minutes", max_time_minutes, kAtLeast0);
    v("valid_every", valid_every, kAtLeast1);
    v("log_every", log_every, kAtLeast1);
    v("patience", patience, kAtLeast0);
    v("metric", metric);
    v("keep_last", keep_last, kAtLeast0);
    v("average_last", average_last, kAtLeast0);
    v("save_every", save_every, kAtLeast0);
    v("valid_max_sentences", valid_max_sentences, kAtLeast0);
    v("seed", seed, kAtLeast0);
  }
};

struct Config {
  ModelConfig model;
  TrainConfig train;

  /// Range checks of every field. Throws nmt::Error naming the first bad field.
  void validate() const;
};

/// JSON <-> Config. Unknown keys and wrong types are errors naming the key.
/// Missing keys keep their defaults; old flat model keys are accepted (see above).
Config config_from_json(const nlohmann::json& json, const std::string& origin);
nlohmann::json config_to_json(const Config& config);
Config load_config(const std::string& path);
/// Applies "section.key=value" or "model.family.key=value" (value parsed as JSON, or
/// taken as a string). Old flat names (model.d_model) are accepted.
void apply_override(Config& config, const std::string& assignment);

}  // namespace nmt
