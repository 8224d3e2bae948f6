#pragma once
// model.rnn: the settings of the two GRU families (gru, attention), their section of the model
// config (nmt/base/config_section.h), registered by lib/models/rnn/rnn_config.cpp.
#include <string>

#include "nmt/base/config_section.h"

namespace nmt {

struct RnnConfig {
  static constexpr const char* kSection = "rnn";

  int64_t embedding_dim = 256;         ///< token embedding size
  int64_t hidden_dim = 512;            ///< decoder GRU and encoder output size (a bidirectional
                                       ///< encoder gives each direction half, as OpenNMT does)
  int64_t layers = 1;                  ///< GRU layers in encoder and decoder
  std::string attention = "bahdanau";  ///< attention family only: bahdanau | dot | general | concat
  bool input_feeding = true;           ///< attention family only: feed the previous attentional vector

  template <typename V>
  void visit(V&& v) {
    v("embedding_dim", embedding_dim, kAtLeast1);
    v("hidden_dim", hidden_dim, kAtLeast1);
    v("layers", layers, kAtLeast1);
    v("attention", attention);
    v("input_feeding", input_feeding);
  }

  /// Configs from before the sections gave these directly under "model".
  static constexpr OldFlatKey kOldFlatKeys[] = {{"embedding_dim", "embedding_dim"},
                                                {"hidden_dim", "hidden_dim"},
                                                {"rnn_layers", "layers"},
                                                {"attention", "attention"},
                                                {"input_feeding", "input_feeding"}};
};

}  // namespace nmt
