#pragma once
// One configuration struct for model and training. Loaded from JSON (configs/*.json),
// overridden by flags, and stored inside every checkpoint, so a model file describes
// itself. Every field has a default and a one-line comment.
//
// Family-specific model settings have their own section (model.rnn, model.transformer);
// configs and checkpoints written before the sections existed, with those keys directly
// under "model", still load (the old keys are moved into their sections).
//
// validate() checks what this layer knows: ranges of every field. The names that are
// registries' business (model.arch, train.metric) and each family's own rules are
// checked by training/config_check.h and models/registry.h.
#include <nlohmann/json.hpp>

#include <string>

namespace nmt {

/// model.rnn: the GRU seq2seq and the attention seq2seq.
struct RnnConfig {
  int64_t embedding_dim = 256;         ///< token embedding size
  int64_t hidden_dim = 512;            ///< decoder GRU and encoder output size (a bidirectional
                                       ///< encoder gives each direction half, as OpenNMT does)
  int64_t layers = 1;                  ///< GRU layers in encoder and decoder
  std::string attention = "bahdanau";  ///< attention family only: bahdanau | dot | general | concat
  bool input_feeding = true;           ///< attention family only: feed the previous attentional vector
};

/// model.transformer
struct TransformerConfig {
  int64_t d_model = 256;            ///< model width
  int64_t heads = 4;                ///< attention heads
  int64_t ffn_dim = 1024;           ///< position-wise feed-forward inner size
  int64_t encoder_layers = 3;       ///< encoder stack depth
  int64_t decoder_layers = 3;       ///< decoder stack depth
  std::string norm = "pre";         ///< post (paper) | pre (more stable) | pre_query (pre, self-attention's keys and values un-normalized: Marian < 1.11)
  double attention_dropout = 0.1;   ///< dropout on attention weights
  bool share_embeddings = false;    ///< one embedding for source and target (joint vocab only)
  bool tie_output = true;           ///< output layer shares the target embedding matrix
  bool output_bias = false;         ///< the output layer adds a bias per target piece (Marian's models have one)
  int64_t max_positions = 1024;     ///< longest sequence the positional encoding covers
  std::string positions = "interleaved";  ///< interleaved: sin/cos pairs, 10000^(2i/D) (the paper) |
                                          ///< concatenated: every sine, then every cosine, 10000^(i/(D/2-1))
                                          ///< (tensor2tensor, Marian)
  std::string decoder_start = "bos";      ///< the decoder's first input: bos (the <s> embedding) |
                                          ///< zeros (a zero embedding, as Marian)
  std::string ffn_activation = "relu";    ///< relu | swish (x * sigmoid(x), Marian's default)
  double layer_norm_epsilon = 1e-5;       ///< every LayerNorm's epsilon (Marian: 1e-6)
  std::string decoder_autoreg = "self_attention";  ///< the decoder's sublayer over its own prefix:
                                                   ///< self_attention | ssru (Marian's simpler simple
                                                   ///< recurrent unit, as Firefox's student models)
};

struct ModelConfig {
  std::string arch = "transformer";  ///< a registered model family (nmt-train --help lists them)
  int64_t source_vocab = 0;          ///< set from the source tokenizer
  int64_t target_vocab = 0;          ///< set from the target tokenizer
  double dropout = 0.1;              ///< dropout on embeddings and between layers
  RnnConfig rnn;                     ///< gru, attention
  TransformerConfig transformer;     ///< transformer
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
