#include "nmt/export/marian_import.h"

#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/export/marian_export.h"
#include "nmt/export/marian_format.h"
#include "nmt/export/marian_npz.h"
#include "nmt/export/marian_shortlist.h"
#include "nmt/models/registry.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/text/sentencepiece_ids.h"
#include "nmt/text/tokenizer.h"

#include "marian_shortlist_file.h"
#include "marian_weights.h"

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

// The Marian version that wrote a model (its model.yml's "version", e.g. "v1.10.25 6f6d4846
// 2021-09-20"), as {major, minor}; {0, 0} without one (Marian before 1.7 wrote none).
std::pair<int, int> marian_version(const MarianConfig& marian) {
  const auto text = marian.get<std::string>("version", "");
  int major = 0, minor = 0;
  if (std::sscanf(text.c_str(), "v%d.%d", &major, &minor) == 2) return {major, minor};
  return {0, 0};
}

// Where the model's norms sit, from its pre- and post-processing ops; an empty string and a
// reason where ours has no such placement. Marian before 1.11 read pre-norm self-attention's
// keys and values un-normalized (our pre_query); 1.11 normalizes them in training (our pre;
// its own step-by-step decoding still reads them un-normalized, as CTranslate2 does not).
std::string marian_norm(const MarianConfig& marian, std::vector<std::string>& reasons) {
  const auto pre = marian.get<std::string>("transformer-preprocess", "");
  const auto post = marian.get<std::string>("transformer-postprocess", "dan");
  const auto top = marian.get<std::string>("transformer-postprocess-top", "");
  // Dropout ("d") does nothing at inference: only normalizing and adding matter here.
  const auto without_dropout = [](std::string ops) {
    ops.erase(std::remove(ops.begin(), ops.end(), 'd'), ops.end());
    return ops;
  };
  if (without_dropout(pre).empty() && without_dropout(post) == "an" && without_dropout(top).empty()) return "post";
  if (without_dropout(pre) == "n" && without_dropout(post) == "a" && without_dropout(top) == "n")
    return marian_version(marian) >= std::pair<int, int>{1, 11} ? "pre" : "pre_query";
  reasons.push_back("transformer-preprocess \"" + pre + "\", transformer-postprocess \"" + post +
                    "\", transformer-postprocess-top \"" + top +
                    "\" (ours: \"\", \"dan\", \"\" (post-norm) or \"n\", \"da\", \"n\" (pre-norm))");
  return "";
}

// What a Marian Transformer is in our config; every setting we cannot compute named at once.
ModelConfig marian_model_config(const MarianConfig& marian, const std::string& origin) {
  std::vector<std::string> reasons;
  marian.require<std::string>(reasons, "type", "amun", "transformer", "only Marian's Transformer is read");
  const auto norm = marian_norm(marian, reasons);
  const auto embedding_ops = marian.get<std::string>("transformer-postprocess-emb", "d");
  if (embedding_ops != "d" && !embedding_ops.empty())
    reasons.push_back("transformer-postprocess-emb: " + embedding_ops + " (ours adds positions and goes on: \"d\" or \"\")");
  const auto autoreg = marian.get<std::string>("transformer-decoder-autoreg", "self-attention");
  const bool ssru = autoreg == "rnn";
  if (autoreg != "self-attention" && !ssru)
    reasons.push_back("transformer-decoder-autoreg: " + autoreg + " (ours: self-attention or an SSRU)");
  if (ssru) {
    marian.require<std::string>(reasons, "dec-cell", "gru", "ssru", "the decoder's only recurrent cell here is the SSRU");
    marian.require<bool>(reasons, "layer-normalization", false, false, "an SSRU with normalized products is not ours");
    marian.require<bool>(reasons, "transformer-rnn-projection", false, false, "an SSRU with an output projection is not ours");
  }
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
  auto& t = config.section<TransformerConfig>();
  t.d_model = marian.required<int64_t>("dim-emb");
  t.heads = marian.required<int64_t>("transformer-heads");
  t.ffn_dim = ffn;
  t.encoder_layers = marian.required<int64_t>("enc-depth");
  t.decoder_layers = marian.required<int64_t>("dec-depth");
  t.norm = norm;
  t.attention_dropout = marian.get<double>("transformer-dropout-attention", 0.0);
  const bool all = marian.get<bool>("tied-embeddings-all", false);
  t.share_embeddings = all || marian.get<bool>("tied-embeddings-src", false);
  t.tie_output = all || marian.get<bool>("tied-embeddings", false);
  t.output_bias = true;
  t.positions = "concatenated";
  t.decoder_start = "zeros";
  t.ffn_activation = activation;
  t.layer_norm_epsilon = kMarianLayerNormEpsilon;
  t.decoder_autoreg = ssru ? "ssru" : "self_attention";
  return config;
}

// The item as float32 values, or an error naming what it is instead.
// An intgemm8 item as Marian's loader reads it (src/tensors/cpu/integer_common.h): int8
// values, then the float quantization multiplier q; a value is int8 / q. Embeddings (names
// with Wemb) are stored as shaped; every other matrix transposed, as [out, in] for a shape of
// [in, out], which is returned here as the shape says.
torch::Tensor dequantized(const MarianItem& item, const std::string& origin) {
  if (item.shape.size() != 2) throw Error(origin + ": intgemm8 item " + item.name + " is not a matrix");
  const auto elements = item.elements();
  if (item.bytes.size() < static_cast<size_t>(elements) + sizeof(float))
    throw Error(origin + ": intgemm8 item " + item.name + " has no quantization multiplier after its values");
  float multiplier;
  std::memcpy(&multiplier, item.bytes.data() + elements, sizeof multiplier);
  if (!(multiplier > 0) || !std::isfinite(multiplier))
    throw Error(origin + ": intgemm8 item " + item.name + " has quantization multiplier " + std::to_string(multiplier));
  const bool transposed = item.name.find("Wemb") == std::string::npos;
  const int64_t rows = item.shape[0], columns = item.shape[1];
  auto values = torch::empty(transposed ? std::vector<int64_t>{columns, rows} : std::vector<int64_t>{rows, columns}, torch::kInt8);
  std::memcpy(values.data_ptr(), item.bytes.data(), static_cast<size_t>(elements));
  auto result = values.to(torch::kFloat32).mul_(1.0f / multiplier);
  return transposed ? result.t().contiguous() : result;
}

torch::Tensor marian_item_tensor(const MarianItem& item, const std::string& origin) {
  if (item.type == MarianType::intgemm8) return dequantized(item, origin);
  if (item.type != MarianType::float32 && item.type != MarianType::float16)
    throw Error(origin + ": item " + item.name + " is " + marian_type_name(static_cast<uint64_t>(item.type)) +
                "; float32, float16 and intgemm8 weights are read");
  // float16 (a model saved from half-precision training) is widened exactly to float32.
  const auto stored = item.type == MarianType::float16 ? torch::kFloat16 : torch::kFloat32;
  std::vector<int64_t> shape(item.shape.begin(), item.shape.end());
  auto tensor = torch::empty(shape, stored);
  if (item.bytes.size() != static_cast<size_t>(tensor.nbytes()))
    throw Error(origin + ": item " + item.name + " has " + std::to_string(item.bytes.size()) + " bytes, its shape needs " +
                std::to_string(tensor.nbytes()));
  std::memcpy(tensor.data_ptr(), item.bytes.data(), item.bytes.size());
  return tensor.to(torch::kFloat32);
}

bool is_activation_multiplier(const std::string& name) {
  const std::string suffix = "_QuantMultA";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct ImportedVocabulary {
  Tokenizer tokenizer;
  std::vector<int> our_id_of_marian_id;
  int unlisted = 0;  // pieces of the SentencePiece model that the id list does not have
};

// A Marian vocab.yml ("piece: id" for ids 0..n-1) as piece texts by id.
std::vector<std::string> marian_id_list(const std::string& path) {
  YAML::Node node;
  try {
    node = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw Error(path + ": not a Marian vocabulary (YAML): " + e.what());
  }
  if (!node.IsMap()) throw Error(path + ": not a Marian vocabulary (a map of piece: id expected)");
  std::vector<std::string> pieces(node.size());
  std::vector<bool> seen(node.size(), false);
  for (const auto& entry : node) {
    long long id = -1;
    std::string piece;
    try {
      piece = entry.first.as<std::string>();
      id = entry.second.as<long long>();
    } catch (const YAML::Exception&) {
      throw Error(path + ": an entry that is not piece: id");
    }
    if (id < 0 || id >= static_cast<long long>(pieces.size()) || seen[static_cast<size_t>(id)])
      throw Error(path + ": id " + std::to_string(id) + " of \"" + piece + "\" is repeated or outside 0.." +
                  std::to_string(pieces.size() - 1));
    pieces[static_cast<size_t>(id)] = piece;
    seen[static_cast<size_t>(id)] = true;
  }
  return pieces;
}

// The tokenizer of one side with our special ids; Marian's ids are the SentencePiece model's
// own, or those of `id_list` (a vocab.yml) where given.
ImportedVocabulary imported_vocabulary(const std::string& path, const std::string& id_list, int64_t marian_size,
                      const std::string& side, const std::string& origin) {
  const auto model = read_file(path, "vocabulary");
  const auto reordered = id_list.empty() ? with_our_special_ids(model, path)
                                         : with_our_special_ids(model, path, marian_id_list(id_list));
  const auto& ids_from = id_list.empty() ? path : id_list;
  if (static_cast<int64_t>(reordered.new_id_of.size()) != marian_size)
    throw Error(ids_from + ": " + std::to_string(reordered.new_id_of.size()) + " pieces, but " + origin + " has a " +
                side + " vocabulary of " + std::to_string(marian_size) + " (dim-vocabs)");
  return {Tokenizer::from_serialized(reordered.serialized, path), reordered.new_id_of, reordered.unlisted};
}

// Marian's value of `link` in our shape, the vocabulary axis in our ids (new rows: zero, or
// for the output bias a logit that is never chosen: <pad> and <s> do not exist in Marian).
torch::Tensor our_weight_value(const torch::Tensor& marian, const MarianWeightLink& link, const ImportedVocabulary* vocabulary,
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

void copy_marian_weights(Seq2SeqModel& model, const std::map<std::string, const MarianItem*>& items,
                  const std::vector<MarianWeightLink>& links, const ImportedVocabulary& source, const ImportedVocabulary& target,
                  const ModelConfig& config, const std::string& origin) {
  auto parameters = model.named_parameters();
  std::set<std::string> used;
  torch::NoGradGuard no_grad;
  for (const auto& link : links) {
    const auto found = items.find(link.marian);
    if (found == items.end()) throw Error(origin + ": no item " + link.marian + " (the config says the model has it)");
    used.insert(link.marian);
    const ImportedVocabulary* axis = link.vocabulary == VocabularyAxis::source   ? &source
                             : link.vocabulary == VocabularyAxis::target ? &target
                                                                         : nullptr;
    const auto our_vocab = link.vocabulary == VocabularyAxis::source ? config.source_vocab : config.target_vocab;
    const auto value = our_weight_value(marian_item_tensor(*found->second, origin), link, axis, our_vocab);
    auto destination = parameters[link.ours];
    if (link.rows >= 0) destination = destination.narrow(0, link.first_row, link.rows);
    if (destination.sizes() != value.sizes())
      throw Error(origin + ": item " + link.marian + " is shaped " + c10::str(found->second->shape) + ", the config makes it " +
                  c10::str(destination.sizes()) + " in ours (transposed where Marian stores [in, out])");
    destination.copy_(value);
  }
  for (const auto& [name, item] : items)
    if (!used.count(name) && name.rfind("special:", 0) != 0 && !is_activation_multiplier(name))
      throw Error(origin + ": item " + name + " is not part of the Transformer its config describes (not read: refused)");
}

}  // namespace

MarianImport import_marian(const std::string& model_path, const std::vector<std::string>& vocabularies,
                           const std::vector<std::string>& id_lists, const std::string& shortlist_path,
                           const std::optional<MarianShortlistCut>& text_cut) {
  if (vocabularies.empty() || vocabularies.size() > 2)
    throw Error("a Marian model needs one SentencePiece vocabulary (.spm) for both sides, or two (source, target)");
  if (id_lists.size() > 2) throw Error("a Marian model has one vocab.yml for both sides, or two (source, target)");
  const auto bytes = read_file(model_path, "Marian model");
  const bool npz = bytes.compare(0, 4, "PK\x03\x04") == 0;  // a zip archive's first entry
  const auto items = npz ? read_marian_npz(bytes, model_path) : read_marian_binary(bytes, model_path);
  std::map<std::string, const MarianItem*> by_name;
  for (const auto& item : items) by_name[item.name] = &item;
  const auto config_item = by_name.find(kMarianModelConfigItem);
  if (config_item == by_name.end()) throw Error(model_path + ": no special:model.yml item (a Marian model carries one)");
  const MarianConfig marian(marian_config_text(*config_item->second), model_path);

  Config config;
  config.model = marian_model_config(marian, model_path);
  const auto marian_source = config.model.source_vocab, marian_target = config.model.target_vocab;
  const std::string no_list;
  const auto& source_ids = id_lists.empty() ? no_list : id_lists.front();
  const auto& target_ids = id_lists.empty() ? no_list : id_lists.back();
  const auto source = imported_vocabulary(vocabularies.front(), source_ids, marian_source, "source", model_path);
  const auto target = imported_vocabulary(vocabularies.back(), target_ids, marian_target, "target", model_path);
  config.model.source_vocab = source.tokenizer.vocab_size();
  config.model.target_vocab = target.tokenizer.vocab_size();
  const auto& settings = config.model.section<TransformerConfig>();
  if (settings.share_embeddings && source.tokenizer.serialized() != target.tokenizer.serialized())
    throw Error(model_path + ": shares its embeddings between source and target, but two different vocabularies were given");
  config.validate();
  auto model = build_model(config.model);
  copy_marian_weights(*model, by_name, marian_weight_links(settings), source, target, config.model, model_path);
  model->eval();
  MarianImport result{LoadedModel{config, model, source.tokenizer, target.tokenizer}, {}, std::nullopt};
  const auto version = marian.get<std::string>("version", "");
  const auto written_by = version.empty() ? std::string("no Marian version in special:model.yml, read as before 1.11")
                                          : "written by Marian " + version;
  if (settings.norm == "pre_query")
    result.notes.push_back("pre-norm, " + written_by + ": self-attention reads keys and values un-normalized, as "
                           "Marian before 1.11 trains and decodes (model.transformer.norm pre_query)");
  else if (settings.norm == "pre")
    result.notes.push_back("pre-norm, " + written_by + ": self-attention reads keys and values normalized, as "
                           "it was trained (model.transformer.norm pre); Marian's own decoder reads them "
                           "un-normalized after the first step, so its output may differ from ours");
  int quantized = 0, multipliers = 0, half = 0;
  for (const auto& item : items) {
    quantized += item.type == MarianType::intgemm8;
    half += item.type == MarianType::float16;
    multipliers += is_activation_multiplier(item.name);
  }
  if (quantized > 0)
    result.notes.push_back(std::to_string(quantized) + " weights were int8 (intgemm8), dequantized to float32 " +
                           "(int8 / their multiplier); --precision int8 quantizes them again our way");
  if (half > 0)
    result.notes.push_back(std::to_string(half) + " weights were float16, widened to float32 (exactly)");
  if (multipliers > 0)
    result.notes.push_back(std::to_string(multipliers) + " activation multipliers (_QuantMultA) not used: " +
                           "ours quantizes activations per row as it goes");
  result.notes.push_back("<pad> and <s> added where the vocabularies had none (" +
                         std::to_string(config.model.source_vocab - marian_source) + " source, " +
                         std::to_string(config.model.target_vocab - marian_target) +
                         " target pieces); the embedding rows and output columns follow");
  if (!shortlist_path.empty()) {
    // Marian's shortlist counts one vocabulary file for both sides as shared (src/translator/
    // translator.h compares the paths): each source piece may then translate as itself.
    const auto& marian_vocabularies = id_lists.empty() ? vocabularies : id_lists;
    const MarianShortlistIds ids{source.our_id_of_marian_id, target.our_id_of_marian_id,
                                 source.tokenizer.vocab_size(), target.tokenizer.vocab_size(),
                                 marian_vocabularies.front() == marian_vocabularies.back()};
    const auto marian = read_marian_shortlist_file(shortlist_path, {source.tokenizer, source.our_id_of_marian_id},
                                                   {target.tokenizer, target.our_id_of_marian_id}, marian_source,
                                                   marian_target, text_cut);
    result.shortlist = shortlist_from_marian(marian, ids);
    result.notes.push_back("shortlist " + shortlist_path + ": the first " + std::to_string(marian.first) +
                           " target ids always, at most " + std::to_string(marian.best) + " per source piece" +
                           (ids.one_vocabulary ? ", each source piece itself (one vocabulary)" : "") +
                           "; Marian's padding of a batch's candidates to a multiple of 8 is not kept");
  }
  for (const auto* side : {&source, &target})
    if (side->unlisted > 0)
      result.notes.push_back(std::to_string(side->unlisted) + " pieces of " +
                             (side == &source ? vocabularies.front() : vocabularies.back()) +
                             " are not in its vocab.yml: Marian reads them as <unk>, here segmentation splits them");
  return result;
}

}  // namespace nmt
