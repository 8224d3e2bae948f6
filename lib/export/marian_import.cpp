#include "nmt/export/marian_import.h"

#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <cstring>
#include <map>
#include <set>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/export/marian_export.h"
#include "nmt/export/marian_format.h"
#include "nmt/export/marian_weights.h"
#include "nmt/models/registry.h"
#include "nmt/text/sentencepiece_ids.h"
#include "nmt/text/tokenizer.h"

namespace nmt {

namespace {

// special:model.yml, read with Marian's defaults (src/common/config_parser.cpp) for what a
// model file may leave out; the sizes it must say.
class MarianConfig {
 public:
  MarianConfig(const std::string& yaml, const std::string& origin) : origin_(origin) {
    try {
      node_ = YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
      throw Error(origin_ + ": special:model.yml is not YAML: " + e.what());
    }
    if (!node_.IsMap()) throw Error(origin_ + ": special:model.yml is not a map of options");
  }

  template <class T>
  T get(const std::string& key, const T& marian_default) const {
    const auto value = node_[key];
    if (!value || value.IsNull()) return marian_default;
    try {
      return value.as<T>();
    } catch (const YAML::Exception&) {
      throw Error(origin_ + ": special:model.yml: " + key + " has a value of another kind than expected");
    }
  }

  template <class T>
  T required(const std::string& key) const {
    if (!node_[key]) throw Error(origin_ + ": special:model.yml has no " + key);
    return get<T>(key, T{});
  }

  // A setting our Transformer computes only at `expected`.
  template <class T>
  void require(std::vector<std::string>& reasons, const std::string& key, const T& marian_default, const T& expected,
               const std::string& why) const {
    const auto value = get<T>(key, marian_default);
    if (value != expected) {
      YAML::Emitter shown;
      shown << value;
      reasons.push_back(key + ": " + shown.c_str() + " (" + why + ")");
    }
  }

 private:
  std::string origin_;
  YAML::Node node_;
};

// What a Marian Transformer is in our config; every setting we cannot compute named at once.
ModelConfig model_config(const MarianConfig& marian, const std::string& origin) {
  std::vector<std::string> reasons;
  marian.require<std::string>(reasons, "type", "amun", "transformer", "only Marian's Transformer is read");
  marian.require<std::string>(reasons, "transformer-preprocess", "", "", "pre-norm: Marian's reads keys and values un-normalized, ours does not");
  marian.require<std::string>(reasons, "transformer-postprocess", "dan", "dan", "ours adds, then normalizes");
  marian.require<std::string>(reasons, "transformer-postprocess-top", "", "", "no final norm after post-norm");
  marian.require<std::string>(reasons, "transformer-decoder-autoreg", "self-attention", "self-attention",
                              "SSRU and average-attention decoders are not ours");
  marian.require<int>(reasons, "transformer-ffn-depth", 2, 2, "our feed-forward has two layers");
  marian.require<bool>(reasons, "transformer-train-positions", false, false, "ours computes its sinusoids");
  marian.require<int>(reasons, "lemma-dim-emb", 0, 0, "factored vocabularies are not ours");
  marian.require<std::vector<int>>(reasons, "transformer-tied-layers", {}, {}, "every layer has its own weights");
  marian.require<bool>(reasons, "output-omit-bias", false, false, "an output layer without bias is not read yet");
  const auto activation = marian.get<std::string>("transformer-ffn-activation", "swish");
  if (activation != "relu" && activation != "swish")
    reasons.push_back("transformer-ffn-activation: " + activation + " (ours: relu or swish)");
  const auto ffn = marian.required<int64_t>("transformer-dim-ffn");
  for (const auto* key : {"transformer-decoder-dim-ffn", "transformer-decoder-ffn-depth"}) {
    const auto value = marian.get<int64_t>(key, 0);
    if (value != 0 && value != (std::string(key).find("depth") != std::string::npos ? 2 : ffn))
      reasons.push_back(std::string(key) + ": " + std::to_string(value) + " (the decoder's feed-forward is the encoder's)");
  }
  if (!reasons.empty()) {
    std::string message = origin + ": our Transformer cannot compute this Marian model: ";
    for (size_t i = 0; i < reasons.size(); ++i) message += (i ? "; " : "") + reasons[i];
    throw Error(message);
  }
  const auto vocabularies = marian.required<std::vector<int64_t>>("dim-vocabs");
  if (vocabularies.size() != 2)
    throw Error(origin + ": special:model.yml: dim-vocabs has " + std::to_string(vocabularies.size()) +
                " sizes; a translation model has 2 (source, target)");
  ModelConfig config;
  config.arch = "transformer";
  config.source_vocab = vocabularies[0];
  config.target_vocab = vocabularies[1];
  config.dropout = marian.get<double>("transformer-dropout", 0.0);
  auto& t = config.transformer;
  t.d_model = marian.required<int64_t>("dim-emb");
  t.heads = marian.required<int64_t>("transformer-heads");
  t.ffn_dim = ffn;
  t.encoder_layers = marian.required<int64_t>("enc-depth");
  t.decoder_layers = marian.required<int64_t>("dec-depth");
  t.norm = "post";
  t.attention_dropout = marian.get<double>("transformer-dropout-attention", 0.0);
  const bool all = marian.get<bool>("tied-embeddings-all", false);
  t.share_embeddings = all || marian.get<bool>("tied-embeddings-src", false);
  t.tie_output = all || marian.get<bool>("tied-embeddings", false);
  t.output_bias = true;
  t.positions = "concatenated";
  t.decoder_start = "zeros";
  t.ffn_activation = activation;
  t.layer_norm_epsilon = kMarianLayerNormEpsilon;
  return config;
}

// The item as float32 values, or an error naming what it is instead.
torch::Tensor item_tensor(const MarianItem& item, const std::string& origin) {
  if (item.type != MarianType::float32)
    throw Error(origin + ": item " + item.name + " is " + marian_type_name(static_cast<uint64_t>(item.type)) +
                "; only float32 weights are read (an intgemm8 model is not dequantized yet)");
  std::vector<int64_t> shape(item.shape.begin(), item.shape.end());
  auto tensor = torch::empty(shape, torch::kFloat32);
  std::memcpy(tensor.data_ptr(), item.bytes.data(), item.bytes.size());
  return tensor;
}

struct Vocabulary {
  Tokenizer tokenizer;
  std::vector<int> our_id_of_marian_id;
};

Vocabulary vocabulary(const std::string& path, int64_t marian_size, const std::string& side, const std::string& origin) {
  const auto reordered = with_our_special_ids(read_file(path, "vocabulary"), path);
  if (static_cast<int64_t>(reordered.new_id_of.size()) != marian_size)
    throw Error(path + ": " + std::to_string(reordered.new_id_of.size()) + " pieces, but " + origin + " has a " +
                side + " vocabulary of " + std::to_string(marian_size) + " (dim-vocabs)");
  return {Tokenizer::from_serialized(reordered.serialized, path), reordered.new_id_of};
}

// Marian's value of `link` in our shape, the vocabulary axis in our ids (new rows: zero, or
// for the output bias a logit that is never chosen: <pad> and <s> do not exist in Marian).
torch::Tensor our_value(const torch::Tensor& marian, const MarianWeightLink& link, const Vocabulary* vocabulary,
                        int64_t our_vocab) {
  auto value = marian;
  if (link.layout == MarianLayout::transposed) value = value.t();
  if (link.layout == MarianLayout::row) value = value.squeeze(0);
  if (vocabulary == nullptr) return value.contiguous();
  auto sizes = value.sizes().vec();
  sizes[0] = our_vocab;
  const bool bias = value.dim() == 1;
  auto ours = bias ? torch::full(sizes, -1e9f) : torch::zeros(sizes);
  const auto index = torch::tensor(std::vector<int64_t>(vocabulary->our_id_of_marian_id.begin(),
                                                        vocabulary->our_id_of_marian_id.end()));
  ours.index_copy_(0, index, value);
  return ours;
}

void copy_weights(Seq2SeqModel& model, const std::map<std::string, const MarianItem*>& items,
                  const std::vector<MarianWeightLink>& links, const Vocabulary& source, const Vocabulary& target,
                  const ModelConfig& config, const std::string& origin) {
  auto parameters = model.named_parameters();
  std::set<std::string> used;
  torch::NoGradGuard no_grad;
  for (const auto& link : links) {
    const auto found = items.find(link.marian);
    if (found == items.end()) throw Error(origin + ": no item " + link.marian + " (the config says the model has it)");
    used.insert(link.marian);
    const Vocabulary* axis = link.vocabulary == VocabularyAxis::source   ? &source
                             : link.vocabulary == VocabularyAxis::target ? &target
                                                                         : nullptr;
    const auto our_vocab = link.vocabulary == VocabularyAxis::source ? config.source_vocab : config.target_vocab;
    const auto value = our_value(item_tensor(*found->second, origin), link, axis, our_vocab);
    auto destination = parameters[link.ours];
    if (link.rows >= 0) destination = destination.narrow(0, link.first_row, link.rows);
    if (destination.sizes() != value.sizes())
      throw Error(origin + ": item " + link.marian + " is shaped " + c10::str(found->second->shape) + ", the config makes it " +
                  c10::str(destination.sizes()) + " in ours (transposed where Marian stores [in, out])");
    destination.copy_(value);
  }
  for (const auto& [name, item] : items)
    if (!used.count(name) && name.rfind("special:", 0) != 0)
      throw Error(origin + ": item " + name + " is not part of the Transformer its config describes (not read: refused)");
}

}  // namespace

MarianImport import_marian(const std::string& model_path, const std::vector<std::string>& vocabularies) {
  if (vocabularies.empty() || vocabularies.size() > 2)
    throw Error("a Marian model needs one SentencePiece vocabulary (.spm) for both sides, or two (source, target)");
  if (model_path.size() >= 4 && model_path.compare(model_path.size() - 4, 4, ".npz") == 0)
    throw Error(model_path + ": Marian's .npz form is not read yet; convert it with Marian's "
                "marian-conv --from model.npz --to model.bin, then import the .bin");
  const auto items = read_marian_binary(read_file(model_path, "Marian model"), model_path);
  std::map<std::string, const MarianItem*> by_name;
  for (const auto& item : items) by_name[item.name] = &item;
  const auto config_item = by_name.find(kMarianModelConfigItem);
  if (config_item == by_name.end()) throw Error(model_path + ": no special:model.yml item (a Marian model carries one)");
  const MarianConfig marian(marian_config_text(*config_item->second), model_path);

  Config config;
  config.model = model_config(marian, model_path);
  const auto marian_source = config.model.source_vocab, marian_target = config.model.target_vocab;
  const auto source = vocabulary(vocabularies.front(), marian_source, "source", model_path);
  const auto target = vocabulary(vocabularies.back(), marian_target, "target", model_path);
  config.model.source_vocab = source.tokenizer.vocab_size();
  config.model.target_vocab = target.tokenizer.vocab_size();
  if (config.model.transformer.share_embeddings && source.tokenizer.serialized() != target.tokenizer.serialized())
    throw Error(model_path + ": shares its embeddings between source and target, but two different vocabularies were given");
  config.validate();
  auto model = build_model(config.model);
  copy_weights(*model, by_name, marian_weight_links(config.model.transformer), source, target, config.model, model_path);
  model->eval();
  MarianImport result{LoadedModel{config, model, source.tokenizer, target.tokenizer}, {}};
  result.notes.push_back("<pad> and <s> added where the vocabularies had none (" +
                         std::to_string(config.model.source_vocab - marian_source) + " source, " +
                         std::to_string(config.model.target_vocab - marian_target) +
                         " target pieces); the embedding rows and output columns follow");
  return result;
}

}  // namespace nmt
