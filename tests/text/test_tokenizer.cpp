// The tokenizer runs in the same process as LibTorch (and tcmalloc, linked into this
// test binary as into the tools): the protobuf clash must not bite.
#include "support/catch.h"
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nmt/text/corpus.h"
#include "nmt/base/error.h"
#include "nmt/text/tokenizer.h"
#include "support/test_util.h"

using nmt::Tokenizer;
using nmt::test::ScratchDir;
using nmt::test::write_text;

namespace {

std::string small_corpus() {
  std::string text;
  const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "dog", "ran", "über", "die", "Straße"};
  for (int i = 0; i < 400; ++i) {
    for (int j = 0; j < 6; ++j) text += std::string(words[(i * 7 + j * 3) % 11]) + (j < 5 ? " " : "");
    text += "\n";
  }
  return text;
}

Tokenizer train_small(const ScratchDir& dir, int vocab_size = 40) {
  write_text(dir.file("corpus.txt"), small_corpus());
  nmt::TokenizerTrainOptions options;
  options.inputs = {dir.file("corpus.txt")};
  options.model_prefix = dir.file("spm");
  options.vocab_size = vocab_size;
  nmt::train_tokenizer(options);
  return Tokenizer::from_file(dir.file("spm.model"));
}

}  // namespace

TEST_CASE("tokenizer trains, encodes into LibTorch tensors and round-trips", "[tokenizer]") {
  ScratchDir dir;
  const auto tokenizer = train_small(dir);
  CHECK(tokenizer.vocab_size() == 40);
  CHECK(tokenizer.piece(nmt::SpecialIds::kPad) == "<pad>");
  CHECK(tokenizer.piece(nmt::SpecialIds::kUnk) == "<unk>");
  CHECK(tokenizer.piece(nmt::SpecialIds::kBos) == "<s>");
  CHECK(tokenizer.piece(nmt::SpecialIds::kEos) == "</s>");
  CHECK(std::filesystem::exists(dir.file("spm.vocab")));

  const std::string sentence = "the dog sat über die Straße";
  const auto ids = tokenizer.encode(sentence);
  REQUIRE(!ids.empty());
  // Same process: ids into a tensor, a LibTorch op, and back.
  auto tensor = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()));
  auto embedded = torch::nn::Embedding(40, 8)(tensor);
  CHECK(embedded.size(0) == static_cast<int64_t>(ids.size()));
  std::vector<int> back(tensor.data_ptr<int64_t>(), tensor.data_ptr<int64_t>() + tensor.numel());
  CHECK(tokenizer.decode(back) == sentence);

  const auto pieces = tokenizer.encode_pieces(sentence);
  CHECK(pieces.size() == ids.size());
  // Specials are dropped on decoding.
  back.insert(back.begin(), nmt::SpecialIds::kBos);
  back.push_back(nmt::SpecialIds::kEos);
  CHECK(tokenizer.decode(back) == sentence);
}

TEST_CASE("tokenizer survives serialization as a checkpoint stores it", "[tokenizer]") {
  ScratchDir dir;
  const auto tokenizer = train_small(dir);
  const auto copy = Tokenizer::from_serialized(tokenizer.serialized(), "copy");
  CHECK(copy.encode("a cat ran") == tokenizer.encode("a cat ran"));
}

TEST_CASE("tokenizer training rejects bad input and leaves nothing behind", "[tokenizer]") {
  ScratchDir dir;
  nmt::TokenizerTrainOptions options;
  options.model_prefix = dir.file("out");

  SECTION("missing input file") {
    options.inputs = {dir.file("missing.txt")};
    CHECK_THROWS_AS(nmt::train_tokenizer(options), nmt::Error);
  }
  SECTION("empty input file") {
    write_text(dir.file("empty.txt"), "\n\n");
    options.inputs = {dir.file("empty.txt")};
    CHECK_THROWS_WITH(nmt::train_tokenizer(options), HasSubstring("empty"));
  }
  SECTION("vocabulary the data cannot fill") {
    write_text(dir.file("tiny.txt"), "a b c\n");
    options.inputs = {dir.file("tiny.txt")};
    options.vocab_size = 5000;
    CHECK_THROWS_AS(nmt::train_tokenizer(options), nmt::Error);
  }
  SECTION("unwritable output: a folder that cannot be made (a file is in its way)") {
    write_text(dir.file("corpus.txt"), small_corpus());
    options.inputs = {dir.file("corpus.txt")};
    options.vocab_size = 40;
    options.model_prefix = dir.file("corpus.txt/sub/out");
    CHECK_THROWS_WITH(nmt::train_tokenizer(options), HasSubstring("cannot create the folder " + dir.file("corpus.txt/sub")));
  }
  CHECK(!std::filesystem::exists(options.model_prefix + ".model"));
  CHECK(!std::filesystem::exists(options.model_prefix + ".vocab"));
}

TEST_CASE("tokenizer rejects a file that is not a model", "[tokenizer]") {
  ScratchDir dir;
  write_text(dir.file("bogus.model"), "not a model");
  CHECK_THROWS_WITH(Tokenizer::from_file(dir.file("bogus.model")), HasSubstring("bogus.model"));
  CHECK_THROWS_WITH(Tokenizer::from_file(dir.file("missing.model")), HasSubstring("missing.model"));
}

// On real data; skipped where ../shared is not present.
TEST_CASE("an 8k joint tokenizer on Multi30k round-trips the validation text", "[tokenizer][multi30k]") {
  const std::string data = nmt::test::source_path("../shared/data/multi30k");
  if (!std::filesystem::exists(data + "/train.de")) {
    WARN("Multi30k not found at " << data << "; skipped");
    return;
  }
  ScratchDir dir;
  nmt::TokenizerTrainOptions options;
  options.inputs = {data + "/train.de", data + "/train.en"};
  options.model_prefix = dir.file("spm");
  options.vocab_size = 8000;
  options.threads = 2;
  nmt::train_tokenizer(options);
  const auto tokenizer = Tokenizer::from_file(dir.file("spm.model"));
  long checked = 0;
  for (const char* side : {"/val.de", "/val.en"}) {
    for (const auto& line : nmt::read_text_lines(data + side)) {
      const auto ids = tokenizer.encode(line);
      if (std::find(ids.begin(), ids.end(), nmt::SpecialIds::kUnk) != ids.end()) continue;
      // SentencePiece's NFKC normalisation turns no-break spaces into spaces and
      // collapses runs of spaces; compare with text normalised the same way.
      std::string spaced = line;
      for (size_t at; (at = spaced.find("\xc2\xa0")) != std::string::npos;) spaced.replace(at, 2, " ");
      std::string expected;
      std::istringstream words(spaced);
      for (std::string word; words >> word;) expected += (expected.empty() ? "" : " ") + word;
      INFO(line);
      CHECK(tokenizer.decode(ids) == expected);
      ++checked;
    }
  }
  CHECK(checked > 1900);
}

TEST_CASE("on large inputs the tokenizer trains on a seeded sample drawn while reading", "[tokenizer]") {
  ScratchDir dir;
  std::string corpus;
  for (int i = 0; i < 400; ++i) corpus += "line " + std::to_string(i) + " of words and more words\n\n";
  write_text(dir.file("corpus.txt"), corpus);
  auto train = [&](long max_sentences, uint64_t seed, const std::string& prefix) {
    nmt::TokenizerTrainOptions options;
    options.inputs = {dir.file("corpus.txt")};
    options.model_prefix = dir.file(prefix);
    options.vocab_size = 40;
    options.max_sentences = max_sentences;
    options.seed = seed;
    return nmt::train_tokenizer(options);
  };
  const auto sampled = train(50, 1, "a");
  CHECK(sampled.sentences_read == 400);  // blank lines are not sentences
  CHECK(sampled.sentences_used == 50);
  train(50, 1, "b");
  const auto bytes = [&](const std::string& name) {
    std::ifstream in(dir.file(name), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(bytes("a.model") == bytes("b.model"));  // the same inputs and seed, the same tokenizer
  const auto everything = train(0, 1, "c");
  CHECK(everything.sentences_used == 400);
  CHECK(train(400, 9, "d").sentences_used == 400);
  CHECK(bytes("c.model") == bytes("d.model"));  // at or under the limit every line counts, whatever the seed
}
