#include "nmt/export/marian_export.h"

#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/export/marian_npz.h"
#include "nmt/export/marian_shortlist.h"
#include "nmt/models/transformer/transformer.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/text/tokenizer.h"

#include "marian_weights.h"
#include "named_weights.h"

namespace nmt {

namespace {

namespace fs = std::filesystem;

// Finite, so that Marian's int8 paths can quantize it; exp() of it is 0 in float.
constexpr float kNeverChosenLogit = -1e9f;

MarianItem marian_float_item(std::string name, const torch::Tensor& value) {
  const auto contiguous = value.to(torch::kFloat32).contiguous();
  MarianItem item;
  item.name = std::move(name);
  item.type = MarianType::float32;
  for (const auto dimension : contiguous.sizes()) item.shape.push_back(static_cast<int32_t>(dimension));
  item.bytes.assign(static_cast<const char*>(contiguous.data_ptr()), contiguous.numel() * sizeof(float));
  return item;
}

// Our weight of `link`, shaped as Marian stores it.
torch::Tensor marian_value(const NamedWeights& weights, const MarianWeightLink& link) {
  auto value = weights[link.ours];
  if (link.rows >= 0) value = value.narrow(0, link.first_row, link.rows);
  if (link.layout == MarianLayout::transposed) return value.t();
  if (link.layout == MarianLayout::row) return value.unsqueeze(0);
  return value;
}

// The output layer's bias: ours (zeros without one; Marian always adds one), and for the
// tokens our searches never emit (<pad>, <s>: decoding/search.cpp) a logit that no softmax
// lets through, since Marian knows no such rule.
MarianItem output_bias_item(const NamedWeights& weights, const TransformerConfig& config, int64_t target_vocab) {
  auto bias = config.output_bias ? weights["output_bias"].clone() : torch::zeros({target_vocab});
  bias[SpecialIds::kPad] = kNeverChosenLogit;
  bias[SpecialIds::kBos] = kNeverChosenLogit;
  return marian_float_item("decoder_ff_logit_out_b", bias.unsqueeze(0));
}

// Every setting Marian's Transformer does not compute, all named in one error.
void refuse_what_marian_cannot_compute(const TransformerConfig& config, const std::string& model_name) {
  std::vector<std::string> reasons;
  // Marian's pre-norm self-attention reads keys and values un-normalized (src/models/
  // transformer.h, LayerAttention): everywhere before 1.11 (Bergamot's, Firefox's), and from
  // 1.11 on still in its step-by-step decoding. Our "pre" normalizes them; "pre_query" does not.
  if (norm_placement(config) == NormPlacement::pre)
    reasons.push_back("norm \"pre\" (Marian's pre-norm self-attention reads keys and values un-normalized, ours "
                      "normalized; set model.transformer.norm post, as OPUS-MT's models are, or pre_query)");
  if (position_layout(config) != PositionLayout::concatenated)
    reasons.push_back("positions \"" + config.positions +
                      "\" (Marian computes every sine, then every cosine; set model.transformer.positions concatenated)");
  if (!decoder_starts_from_zeros(config))
    reasons.push_back("decoder_start \"" + config.decoder_start +
                      "\" (Marian's decoder starts from a zero embedding; set model.transformer.decoder_start zeros)");
  if (reasons.empty()) return;
  std::string message = model_name + ": Marian cannot compute this model as it was trained: ";
  for (size_t i = 0; i < reasons.size(); ++i) message += (i ? "; " : "") + reasons[i];
  throw Error(message + ". Train one with those settings to export it to Marian");
}

std::string marian_config_yaml(const ModelConfig& model) {
  const auto& config = model.section<TransformerConfig>();
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << "transformer";
  out << YAML::Key << "dim-emb" << YAML::Value << config.d_model;
  out << YAML::Key << "dim-vocabs" << YAML::Value << YAML::Flow << YAML::BeginSeq << model.source_vocab
      << model.target_vocab << YAML::EndSeq;
  out << YAML::Key << "enc-depth" << YAML::Value << config.encoder_layers;
  out << YAML::Key << "dec-depth" << YAML::Value << config.decoder_layers;
  out << YAML::Key << "transformer-heads" << YAML::Value << config.heads;
  out << YAML::Key << "transformer-dim-ffn" << YAML::Value << config.ffn_dim;
  out << YAML::Key << "transformer-ffn-depth" << YAML::Value << 2;
  out << YAML::Key << "transformer-ffn-activation" << YAML::Value << config.ffn_activation;
  // Post-norm: add, then normalize. Pre-norm (pre_query): normalize each sublayer's input,
  // add, and normalize each stack's output (Marian's --task transformer-base-prenorm).
  const bool pre = uses_pre_norm(config);
  out << YAML::Key << "transformer-preprocess" << YAML::Value << (pre ? "n" : "");
  out << YAML::Key << "transformer-postprocess" << YAML::Value << (pre ? "da" : "dan");
  out << YAML::Key << "transformer-postprocess-emb" << YAML::Value << "d";
  out << YAML::Key << "transformer-postprocess-top" << YAML::Value << (pre ? "n" : "");
  if (decoder_autoregression(config) == DecoderAutoregression::ssru) {
    out << YAML::Key << "transformer-decoder-autoreg" << YAML::Value << "rnn";
    out << YAML::Key << "dec-cell" << YAML::Value << "ssru";
  } else {
    out << YAML::Key << "transformer-decoder-autoreg" << YAML::Value << "self-attention";
  }
  out << YAML::Key << "transformer-train-positions" << YAML::Value << false;
  out << YAML::Key << "tied-embeddings" << YAML::Value << (config.tie_output && !config.share_embeddings);
  out << YAML::Key << "tied-embeddings-src" << YAML::Value << (config.share_embeddings && !config.tie_output);
  out << YAML::Key << "tied-embeddings-all" << YAML::Value << (config.share_embeddings && config.tie_output);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string marian_decoder_yaml(const std::string& source_vocabulary, const std::string& target_vocabulary,
                                bool with_shortlist) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "models" << YAML::Value << YAML::BeginSeq << MarianFiles::kModel << YAML::EndSeq;
  out << YAML::Key << "vocabs" << YAML::Value << YAML::BeginSeq << source_vocabulary << target_vocabulary << YAML::EndSeq;
  out << YAML::Key << "beam-size" << YAML::Value << 5;
  if (with_shortlist)
    out << YAML::Key << "shortlist" << YAML::Value << YAML::BeginSeq << MarianFiles::kShortlist << YAML::EndSeq;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

// Every matrix of `model` as intgemm8, rows ([1, n]: biases, norms) and the config as they are.
void write_matrices_as_int8(MarianModel& model, const ModelConfig& sizes, const std::string& model_name) {
  // Marian's int8 products take matrices whose sides are multiples of 8 (intgemm's tiles;
  // src/tensors/cpu/intgemm_interface.h), the tied output layer's vocabulary side included.
  const auto& config = sizes.section<TransformerConfig>();
  for (const auto& [what, size] : std::vector<std::pair<std::string, int64_t>>{
           {"d_model", config.d_model}, {"ffn_dim", config.ffn_dim},
           {"the source vocabulary", sizes.source_vocab}, {"the target vocabulary", sizes.target_vocab}})
    if (size % 8 != 0)
      throw Error(model_name + ": " + what + " is " + std::to_string(size) +
                  "; Marian multiplies int8 matrices whose sides are multiples of 8 (--int8-weights)");
  for (auto& item : model.items)
    if (item.shape.size() == 2 && item.shape[0] > 1) item = intgemm8_item(item);
  model.notes.push_back("matrices written as int8 (intgemm8): Marian computes with them in int8; "
                        "the .npz keeps float32");
}

}  // namespace

MarianModel marian_model(const LoadedModel& loaded, const std::string& model_name, bool int8_weights) {
  const auto* transformer = dynamic_cast<const TransformerModel*>(loaded.model.get());
  if (transformer == nullptr)
    throw Error(model_name + ": a \"" + loaded.config.model.arch +
                "\" model; Marian's models are Transformers here (its RNN models are not written)");
  const auto& config = loaded.config.model.section<TransformerConfig>();
  refuse_what_marian_cannot_compute(config, model_name);
  MarianModel model;
  if (config.layer_norm_epsilon != kMarianLayerNormEpsilon) {
    std::ostringstream note;
    note << "LayerNorm epsilon " << config.layer_norm_epsilon << " becomes Marian's " << kMarianLayerNormEpsilon
         << ": scores may differ in the last digits";
    model.notes.push_back(note.str());
  }
  const NamedWeights weights(*transformer, model_name);
  for (const auto& link : marian_weight_links(config))
    if (link.ours != "output_bias") model.items.push_back(marian_float_item(link.marian, marian_value(weights, link)));
  model.items.push_back(output_bias_item(weights, config, loaded.config.model.target_vocab));
  model.config_yaml = marian_config_yaml(loaded.config.model);
  model.items.push_back(marian_config_item(model.config_yaml));
  if (int8_weights) write_matrices_as_int8(model, loaded.config.model, model_name);
  return model;
}

std::vector<std::string> export_marian(const LoadedModel& loaded, const std::string& model_name,
                                       const std::string& directory, bool replace, bool int8_weights,
                                       const Shortlist* shortlist) {
  // One model: the .npz from its float32 items, then model.bin from the same items quantized.
  auto model = marian_model(loaded, model_name);
  const auto npz = marian_npz_bytes(model.items);
  if (int8_weights) write_matrices_as_int8(model, loaded.config.model, model_name);
  const bool shared = loaded.source_tokenizer.serialized() == loaded.target_tokenizer.serialized();
  const std::string source_vocabulary = shared ? MarianFiles::kSharedVocabulary : MarianFiles::kSourceVocabulary;
  const std::string target_vocabulary = shared ? MarianFiles::kSharedVocabulary : MarianFiles::kTargetVocabulary;
  write_model_directory(directory, replace, [&](const std::string& staged) {
    const fs::path root(staged);
    AtomicFileWriter binary((root / MarianFiles::kModel).string());
    write_marian_binary(model.items, [&](std::string_view bytes) { binary.write(std::string(bytes)); });
    binary.commit();
    write_file_atomically((root / MarianFiles::kNpzModel).string(), npz);
    write_file_atomically((root / source_vocabulary).string(), loaded.source_tokenizer.serialized());
    if (!shared) write_file_atomically((root / target_vocabulary).string(), loaded.target_tokenizer.serialized());
    if (shortlist != nullptr)
      write_file_atomically((root / MarianFiles::kShortlist).string(),
                            marian_shortlist_bytes(marian_shortlist_from(*shortlist)));
    write_file_atomically((root / MarianFiles::kDecoderConfig).string(),
                          marian_decoder_yaml(source_vocabulary, target_vocabulary, shortlist != nullptr));
  });
  if (shortlist != nullptr && shared)
    model.notes.push_back(std::string(MarianFiles::kShortlist) + ": with one vocabulary for both sides Marian also " +
                          "lets each source piece translate as itself (nmt-import --shortlist reads it so)");
  return model.notes;
}

}  // namespace nmt
