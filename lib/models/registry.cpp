#include "nmt/models/registry.h"

#include "nmt/base/error.h"
#include "nmt/models/rnn/attention_seq2seq.h"
#include "nmt/models/rnn/gru_seq2seq.h"
#include "nmt/models/transformer/transformer.h"

namespace nmt {

ModelPtr build_model(const ModelConfig& config) {
  if (config.source_vocab <= 0 || config.target_vocab <= 0)
    throw Error("model config lacks vocabulary sizes");
  if (config.arch == "gru") return std::make_shared<GruSeq2Seq>(config);
  if (config.arch == "attention") return std::make_shared<AttentionSeq2Seq>(config);
  if (config.arch == "transformer") return std::make_shared<TransformerModel>(config);
  throw Error("unknown model architecture \"" + config.arch + "\"");
}

}  // namespace nmt
