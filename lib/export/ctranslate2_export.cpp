#include "nmt/export/ctranslate2_export.h"

#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/models/transformer/transformer.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/text/tokenizer.h"

#include "named_weights.h"

namespace nmt {

namespace {

namespace fs = std::filesystem;

// CTranslate2's ActivationType and EmbeddingsMerge ids (python/ctranslate2/specs/common_spec.py).
constexpr int kReluActivation = 0;
constexpr int kSwishActivation = 2;
constexpr int kConcatEmbeddings = 0;

int activation_id(const TransformerConfig& config) {
  return feed_forward_activation(config) == FeedForwardActivation::swish ? kSwishActivation : kReluActivation;
}

Ctranslate2Variable int8_attribute(std::string name, int value) {
  return {std::move(name), torch::scalar_tensor(value, torch::kInt8)};
}

// Builds the variable list scope by scope.
class SpecBuilder {
 public:
  explicit SpecBuilder(const NamedWeights& weights) : weights_(weights) {}

  void tensor(const std::string& name, const std::string& ours) { add({name, weights_[ours]}); }
  void add(Ctranslate2Variable variable) { variables_.push_back(std::move(variable)); }

  // A Linear: weight [out, in] and, where ours has one, bias [out].
  void linear(const std::string& scope, const std::string& ours) {
    tensor(scope + "/weight", ours + ".weight");
    if (weights_.has(ours + ".bias")) tensor(scope + "/bias", ours + ".bias");
  }

  // LibTorch's LayerNorm weight and bias are CTranslate2's gamma and beta.
  void layer_norm(const std::string& scope, const std::string& ours) {
    tensor(scope + "/gamma", ours + ".weight");
    tensor(scope + "/beta", ours + ".bias");
  }

  std::vector<Ctranslate2Variable> take() { return std::move(variables_); }

 private:
  const NamedWeights& weights_;
  std::vector<Ctranslate2Variable> variables_;
};

// A layer's self-attention with its norm: the fused projection holds Q, K, V stacked, as ours.
void add_self_attention(SpecBuilder& spec, const std::string& scope, const std::string& ours, const std::string& norm) {
  spec.layer_norm(scope + "/self_attention/layer_norm", norm);
  spec.linear(scope + "/self_attention/linear_0", ours + ".self_attention.qkv");
  spec.linear(scope + "/self_attention/linear_1", ours + ".self_attention.output");
}

void add_feed_forward(SpecBuilder& spec, const std::string& scope, const std::string& ours) {
  spec.layer_norm(scope + "/ffn/layer_norm", ours + ".feed_forward_norm");
  spec.linear(scope + "/ffn/linear_0", ours + ".feed_forward.inner");
  spec.linear(scope + "/ffn/linear_1", ours + ".feed_forward.outer");
}

void add_encoder(SpecBuilder& spec, const TransformerConfig& config) {
  for (int64_t i = 0; i < config.encoder_layers; ++i) {
    const auto scope = "encoder/layer_" + std::to_string(i);
    const auto ours = "encoder." + std::to_string(i);
    add_self_attention(spec, scope, ours, ours + ".attention_norm");
    add_feed_forward(spec, scope, ours);
  }
  if (uses_pre_norm(config)) spec.layer_norm("encoder/layer_norm", "encoder_norm");
  spec.add(ctranslate2_int16("encoder/num_heads", config.heads));
  spec.add(ctranslate2_flag("encoder/pre_norm", uses_pre_norm(config)));
  spec.add(int8_attribute("encoder/activation", activation_id(config)));
  spec.add(int8_attribute("encoder/embeddings_merge", kConcatEmbeddings));
  spec.add(ctranslate2_flag("encoder/scale_embeddings", true));
  spec.add(ctranslate2_flag("encoder/multi_query_attention", false));
}

void add_decoder(SpecBuilder& spec, const TransformerConfig& config, int64_t alignment_layer) {
  for (int64_t i = 0; i < config.decoder_layers; ++i) {
    const auto scope = "decoder/layer_" + std::to_string(i);
    const auto ours = "decoder." + std::to_string(i);
    add_self_attention(spec, scope, ours, ours + ".self_attention_norm");
    spec.layer_norm(scope + "/attention/layer_norm", ours + ".cross_attention_norm");
    spec.linear(scope + "/attention/linear_0", ours + ".cross_attention.query");
    spec.linear(scope + "/attention/linear_1", ours + ".cross_attention.key_value");  // K, V stacked, as ours
    spec.linear(scope + "/attention/linear_2", ours + ".cross_attention.output");
    add_feed_forward(spec, scope, ours);
  }
  if (uses_pre_norm(config)) spec.layer_norm("decoder/layer_norm", "decoder_norm");
  spec.add(ctranslate2_int16("decoder/num_heads", config.heads));
  spec.add(ctranslate2_flag("decoder/pre_norm", uses_pre_norm(config)));
  spec.add(int8_attribute("decoder/activation", activation_id(config)));
  spec.add(ctranslate2_int16("decoder/alignment_layer", alignment_layer));
  spec.add(ctranslate2_int16("decoder/alignment_heads", 0));  // 0: the mean of every head, as ours
  spec.add(ctranslate2_flag("decoder/scale_embeddings", true));
  spec.add(ctranslate2_flag("decoder/alibi", false));
  spec.add(ctranslate2_flag("decoder/alibi_use_positive_positions", false));
  spec.add(ctranslate2_flag("decoder/scale_alibi", false));
  spec.add(ctranslate2_flag("decoder/start_from_zero_embedding", decoder_starts_from_zeros(config)));
}

// Embeddings, positions and the output projection; a weight used twice is written once and
// aliased, as CTranslate2's converters do (they keep the name that sorts first).
void add_embeddings(SpecBuilder& spec, std::vector<Ctranslate2Alias>& aliases, const TransformerConfig& config) {
  const bool shared = config.share_embeddings;
  spec.tensor("decoder/embeddings/weight", shared ? "embedding.weight" : "target_embedding.weight");
  if (shared)
    aliases.push_back({"encoder/embeddings_0/weight", "decoder/embeddings/weight"});
  else
    spec.tensor("encoder/embeddings_0/weight", "source_embedding.weight");
  if (config.tie_output)
    aliases.push_back({"decoder/projection/weight", "decoder/embeddings/weight"});
  else
    spec.tensor("decoder/projection/weight", "output_weight");
  if (config.output_bias) spec.tensor("decoder/projection/bias", "output_bias");
  spec.tensor("decoder/position_encodings/encodings", "positions");
  aliases.push_back({"encoder/position_encodings/encodings", "decoder/position_encodings/encodings"});
}

// The one epsilon of every LayerNorm (CTranslate2 has one for the whole model).
double layer_norm_epsilon(const torch::nn::Module& model, const std::string& model_name) {
  std::set<double> epsilons;
  for (const auto& module : model.modules())
    if (const auto* norm = module->as<torch::nn::LayerNorm>()) epsilons.insert(norm->options.eps());
  if (epsilons.size() != 1)
    throw Error(model_name + ": CTranslate2 takes one LayerNorm epsilon for the whole model, this model has " +
                std::to_string(epsilons.size()));
  return *epsilons.begin();
}

std::vector<std::string> vocabulary(const Tokenizer& tokenizer, const std::string& side, const std::string& model_name) {
  std::vector<std::string> pieces;
  std::set<std::string> seen;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) {
    pieces.push_back(tokenizer.piece(id));
    if (!seen.insert(pieces.back()).second)
      throw Error(model_name + ": the " + side + " vocabulary has piece \"" + pieces.back() +
                  "\" twice; CTranslate2 looks tokens up by their text");
  }
  return pieces;
}

nlohmann::json config_json(const Tokenizer& source, const Tokenizer& target, double epsilon) {
  // Our source ends in </s>; the target starts from <s> (our SpecialIds).
  return {{"add_source_bos", false},
          {"add_source_eos", true},
          {"bos_token", target.piece(SpecialIds::kBos)},
          {"decoder_start_token", target.piece(SpecialIds::kBos)},
          {"eos_token", target.piece(SpecialIds::kEos)},
          {"unk_token", source.piece(SpecialIds::kUnk)},
          {"layer_norm_epsilon", epsilon},
          {"multi_query_attention", false}};
}

void write_json(const fs::path& path, const nlohmann::json& json) {
  write_file_atomically(path.string(), json.dump(2) + "\n");
}

void write_directory_files(const Ctranslate2Model& model, const LoadedModel& loaded, const Shortlist* shortlist,
                           const fs::path& directory) {
  AtomicFileWriter binary((directory / Ctranslate2Files::kModel).string());
  write_ctranslate2_binary(model.binary, [&](std::string_view bytes) { binary.write(std::string(bytes)); });
  binary.commit();
  write_json(directory / Ctranslate2Files::kConfig, model.config);
  if (model.source_vocabulary == model.target_vocabulary) {
    write_json(directory / "shared_vocabulary.json", model.target_vocabulary);
  } else {
    write_json(directory / "source_vocabulary.json", model.source_vocabulary);
    write_json(directory / "target_vocabulary.json", model.target_vocabulary);
  }
  write_file_atomically((directory / Ctranslate2Files::kSourceTokenizer).string(), loaded.source_tokenizer.serialized());
  write_file_atomically((directory / Ctranslate2Files::kTargetTokenizer).string(), loaded.target_tokenizer.serialized());
  if (shortlist != nullptr)
    write_file_atomically((directory / Ctranslate2Files::kVocabularyMap).string(),
                          ctranslate2_vocabulary_map(*shortlist, loaded.source_tokenizer, loaded.target_tokenizer));
}

}  // namespace

Ctranslate2Model ctranslate2_model(const LoadedModel& loaded, const std::string& model_name) {
  const auto* transformer = dynamic_cast<const TransformerModel*>(loaded.model.get());
  if (transformer == nullptr)
    throw Error(model_name + ": a \"" + loaded.config.model.arch +
                "\" model; CTranslate2 runs Transformers (its TransformerSpec), not the RNN families");
  const auto& config = loaded.config.model.section<TransformerConfig>();
  if (decoder_autoregression(config) == DecoderAutoregression::ssru)
    throw Error(model_name + ": its decoder has SSRU layers (model.transformer.decoder_autoreg ssru); CTranslate2's "
                "TransformerSpec decodes with self-attention only");
  if (norm_placement(config) == NormPlacement::pre_query)
    throw Error(model_name + ": its self-attention reads keys and values un-normalized (model.transformer.norm "
                "pre_query, as Marian before 1.11); CTranslate2's pre-norm normalizes them");
  const NamedWeights weights(*transformer, model_name);
  SpecBuilder spec(weights);
  Ctranslate2Model model;
  add_embeddings(spec, model.binary.aliases, config);
  add_encoder(spec, config);
  add_decoder(spec, config, transformer->alignment_layer());
  model.binary.spec = "TransformerSpec";
  model.binary.revision = kCtranslate2TransformerRevision;
  model.binary.variables = spec.take();
  model.config = config_json(loaded.source_tokenizer, loaded.target_tokenizer,
                             layer_norm_epsilon(*transformer, model_name));
  model.source_vocabulary = vocabulary(loaded.source_tokenizer, "source", model_name);
  model.target_vocabulary = vocabulary(loaded.target_tokenizer, "target", model_name);
  return model;
}

std::string ctranslate2_vocabulary_map(const Shortlist& shortlist, const Tokenizer& source, const Tokenizer& target) {
  const auto targets = [&target](const std::vector<ShortlistEntry>& entries) {
    std::string text;
    for (const auto& entry : entries) text += (text.empty() ? "" : " ") + target.piece(entry.target);
    return text;
  };
  std::string map = "\t" + targets(shortlist.always()) + "\n";
  for (int s = 0; s < shortlist.source_vocab(); ++s)
    if (!shortlist.translations(s).empty()) map += source.piece(s) + "\t" + targets(shortlist.translations(s)) + "\n";
  return map;
}

void export_ctranslate2(const LoadedModel& loaded, const std::string& model_name, const std::string& directory,
                        bool replace, const Shortlist* shortlist) {
  const auto model = ctranslate2_model(loaded, model_name);
  write_model_directory(directory, replace,
                        [&](const std::string& staged) { write_directory_files(model, loaded, shortlist, staged); });
}

}  // namespace nmt
