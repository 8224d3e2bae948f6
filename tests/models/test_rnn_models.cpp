// Behaviour every model family must show, checked here for the two RNN families
// (the Transformer has its own file with the same checks and more).
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/models/rnn/rnn_config.h"
#include "nmt/training/loss.h"
#include "nmt/models/rnn/attention_seq2seq.h"
#include "nmt/models/rnn/gru_seq2seq.h"
#include "support/model_checks.h"

namespace {

nmt::ModelConfig small_rnn_config(const std::string& arch, const std::string& attention = "bahdanau",
                                  bool input_feeding = true, int64_t layers = 1) {
  nmt::ModelConfig config;
  config.arch = arch;
  config.source_vocab = 13;
  config.target_vocab = 11;
  config.section<RnnConfig>().embedding_dim = 8;
  config.section<RnnConfig>().hidden_dim = 12;
  config.section<RnnConfig>().layers = layers;
  config.section<RnnConfig>().attention = attention;
  config.section<RnnConfig>().input_feeding = input_feeding;
  config.dropout = 0.0;
  return config;
}

std::shared_ptr<nmt::Seq2SeqModel> make(const nmt::ModelConfig& config) {
  torch::manual_seed(7);
  if (config.arch == "gru") return std::make_shared<nmt::GruSeq2Seq>(config);
  return std::make_shared<nmt::AttentionSeq2Seq>(config);
}

}  // namespace

TEST_CASE("GRU seq2seq: shapes, step = forward, padding, overfitting", "[models][gru]") {
  for (int64_t layers : {1, 2}) {
    auto model = make(small_rnn_config("gru", "bahdanau", true, layers));
    nmt::test::check_shapes(*model, 11, /*attention=*/false);
    nmt::test::check_step_matches_forward(*model);
    nmt::test::check_padding_invariance(*model);
  }
  auto model = make(small_rnn_config("gru"));
  nmt::test::check_overfits(*model);
}

TEST_CASE("attention seq2seq: every attention kind", "[models][attention]") {
  for (const std::string kind : {"bahdanau", "dot", "general", "concat"}) {
    for (bool feeding : {true, false}) {
      INFO("attention " << kind << ", input feeding " << feeding);
      auto model = make(small_rnn_config("attention", kind, feeding, kind == "general" ? 2 : 1));
      nmt::test::check_shapes(*model, 11, /*attention=*/true);
      nmt::test::check_step_matches_forward(*model);
      nmt::test::check_padding_invariance(*model);
      nmt::test::check_attention_rows(*model);
    }
  }
  auto model = make(small_rnn_config("attention", "general"));
  nmt::test::check_overfits(*model);
}
