// Attention that means something: an attention model trained on the bundled
// number-words task looks at the English units word while writing the German one,
// although German puts the units first ("forty-seven" -> "siebenundvierzig").
#include <ATen/Parallel.h>
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/export/attention_export.h"
#include "nmt/models/rnn/rnn_config.h"
#include "nmt/text/batching.h"
#include "nmt/models/checkpoint.h"
#include "nmt/tasks/number_words.h"
#include "nmt/decoding/search.h"
#include "nmt/training/trainer.h"
#include "support/test_util.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

std::string strip_word_start(const std::string& piece) {
  return piece.rfind("\xe2\x96\x81", 0) == 0 ? piece.substr(3) : piece;
}

int find_piece(const std::vector<std::string>& pieces, const std::string& text) {
  for (size_t i = 0; i < pieces.size(); ++i)
    if (strip_word_start(pieces[i]) == text) return static_cast<int>(i);
  return -1;
}

}  // namespace

TEST_CASE("the German units word attends to the English units word", "[align][slow]") {
  at::set_num_threads(1);  // one thread: ctest -j runs another test on the other core
  ScratchDir dir;
  TokenizerTrainOptions spm;  // as the quick start does
  spm.inputs = {test::source_path("data/numbers/train.en"), test::source_path("data/numbers/train.de")};
  spm.model_prefix = dir.file("spm");
  spm.vocab_size = 120;
  spm.model_type = "bpe";
  train_tokenizer(spm);

  TrainerOptions options;
  options.train_source = test::source_path("data/numbers/train.en");
  options.train_target = test::source_path("data/numbers/train.de");
  options.valid_source = test::source_path("data/numbers/valid.en");
  options.valid_target = test::source_path("data/numbers/valid.de");
  options.source_spm = options.target_spm = dir.file("spm.model");
  options.model_dir = dir.file("model");
  options.quiet = true;
  auto& config = options.config;
  config.model.arch = "attention";
  config.model.section<RnnConfig>().embedding_dim = 32, config.model.section<RnnConfig>().hidden_dim = 64;
  config.train.batch_tokens = 2048, config.train.learning_rate = 3e-3, config.train.schedule = "constant";
  config.train.max_steps = 300, config.train.valid_every = 300, config.train.valid_max_sentences = 50;
  train(options);
  auto model = load_model(dir.file("model/last.pt"));

  // Every two-digit number with a units part: English "<tens>-<unit>", German "<unit>und<tens>".
  int usable = 0, argmax_hits = 0;
  double mass = 0;
  const char* english_units[] = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"};
  const char* german_units[] = {"ein", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"};
  torch::NoGradGuard no_grad;
  for (long n = 21; n < 100; ++n) {
    if (n % 10 == 0) continue;
    const auto source_ids = model.source_tokenizer.encode(english_number_words(n));
    const auto target_ids = model.target_tokenizer.encode(german_number_words(n));
    std::vector<std::string> source_pieces, target_pieces;
    for (int id : source_ids) source_pieces.push_back(model.source_tokenizer.piece(id));
    for (int id : target_ids) target_pieces.push_back(model.target_tokenizer.piece(id));
    const int s = find_piece(source_pieces, english_units[n % 10 - 1]);
    const int t = find_piece(target_pieces, german_units[n % 10 - 1]);
    if (s < 0 || t < 0) continue;  // the tokenizer merged the units word with a neighbour
    ++usable;
    std::vector<const std::vector<int>*> row{&source_ids};
    const auto forced = force_decode(*model.model, pad_sequences(row, -1, SpecialIds::kEos), target_ids, true);
    const auto attention = forced.attention[t];  // the row that produced the German units piece
    mass += attention[s].item<double>();
    argmax_hits += attention.argmax().item<int64_t>() == s;
  }
  // Uniform attention over these 4-6 source positions would give 0.17-0.25 of the mass;
  // the trained model puts most of it on the one right piece.
  REQUIRE(usable >= 24);  // a third of the 72 numbers; 32 with the quick-start tokenizer
  INFO("usable " << usable << ", mean mass " << mass / usable << ", argmax hits " << argmax_hits);
  CHECK(mass / usable > 0.6);
  CHECK(argmax_hits >= 0.9 * usable);
}
