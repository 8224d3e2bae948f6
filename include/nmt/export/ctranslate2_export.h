#pragma once
// Our Transformer as a CTranslate2 model (CTranslate2 4.x: TransformerSpec revision 7 in
// binary version 6; ctranslate2_format.h writes the binary). Every option our Transformer has
// maps onto the spec:
//   norm pre|post           encoder|decoder/pre_norm (pre: the stacks' final layer_norm too)
//   share_embeddings        encoder/embeddings_0/weight an alias of decoder/embeddings/weight
//   tie_output              decoder/projection/weight an alias of decoder/embeddings/weight
//   output_bias             decoder/projection/bias
//   sinusoidal positions    position_encodings/encodings, our table written out (either layout)
//   ffn_activation          encoder|decoder/activation (ReLU or Swish)
//   decoder_start zeros     decoder/start_from_zero_embedding
//   embeddings x sqrt(D)    scale_embeddings
//   LayerNorm epsilon       config.json layer_norm_epsilon
//   source + </s>           config.json add_source_eos
//   alignment layer         decoder/alignment_layer with every head averaged (alignment_heads 0)
// Weights are written in float32; CTranslate2 quantizes them when it loads the model with
// compute_type int8 (or converts them for float16/bfloat16).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "nmt/export/ctranslate2_format.h"
#include "nmt/models/checkpoint.h"
#include "nmt/text/shortlist.h"

namespace nmt {

/// The TransformerSpec revision this exporter writes.
constexpr uint32_t kCtranslate2TransformerRevision = 7;

struct Ctranslate2Model {
  Ctranslate2Binary binary;
  nlohmann::json config;                        ///< config.json
  std::vector<std::string> source_vocabulary;  ///< pieces in id order
  std::vector<std::string> target_vocabulary;
};

/// The model in CTranslate2's layout. Throws nmt::Error naming what CTranslate2 cannot express:
/// a model that is not a Transformer (the RNN families), layer norms with different epsilons,
/// a vocabulary whose pieces repeat.
Ctranslate2Model ctranslate2_model(const LoadedModel& loaded, const std::string& model_name);

/// The files of the model directory: model.bin, config.json, shared_vocabulary.json (or
/// source_vocabulary.json and target_vocabulary.json when they differ, as CTranslate2's
/// converters name them), and our SentencePiece models as source_spm.model and target_spm.model.
struct Ctranslate2Files {
  static constexpr const char* kModel = "model.bin";
  static constexpr const char* kConfig = "config.json";
  static constexpr const char* kSourceTokenizer = "source_spm.model";
  static constexpr const char* kTargetTokenizer = "target_spm.model";
  /// A vocabulary shortlist as CTranslate2's vocabulary map (its translate option use_vmap).
  static constexpr const char* kVocabularyMap = "vmap.txt";
};

/// `shortlist` as CTranslate2's vocabulary map (src/vocabulary_map.cc reads it): a line
/// "\tT1 T2 ..." of the target pieces always allowed, then per source piece with
/// translations "S\tT1 T2 ...". CTranslate2 allows a batch the union of its lines'
/// candidates, where our decoders keep each line to its own.
std::string ctranslate2_vocabulary_map(const Shortlist& shortlist, const Tokenizer& source, const Tokenizer& target);

/// Writes the model directory `directory`. It appears whole or not at all: the files are
/// written into a temporary directory beside it, which is then renamed. An existing
/// `directory` is refused (nmt::Error) unless `replace`; with it, the old directory is removed
/// only once the new one is complete. With a `shortlist`, its vmap.txt too.
void export_ctranslate2(const LoadedModel& loaded, const std::string& model_name, const std::string& directory,
                        bool replace, const Shortlist* shortlist = nullptr);

}  // namespace nmt
