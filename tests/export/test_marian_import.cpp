// Reading Marian's models: a vocabulary as Marian's trainer makes it (</s> 0, <unk> 1, no <s>
// or <pad>; tests/fixtures/marian-vocabulary) given our special ids, and a model in Marian's
// own ids imported to compute what the model it was made from computes. What the imported
// model computes against Marian itself: tests/apps/marian_test.sh.
#include "support/catch.h"
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/export/marian_export.h"
#include "nmt/export/marian_format.h"
#include "nmt/export/marian_import.h"
#include "nmt/export/marian_npz.h"
#include "nmt/models/registry.h"
#include "nmt/models/transformer/transformer.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/text/sentencepiece_ids.h"
#include "nmt/text/tokenizer.h"
#include "support/test_util.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

std::string marian_vocabulary_path() { return test::source_path("tests/fixtures/marian-vocabulary/numbers.spm"); }

// Marian's ids of "five hundred" (spm_encode --output_format=id with the fixture).
const std::vector<int> kMarianIds{31, 40, 49, 34, 18};

// The items of `items` whose vocabulary axis is in our ids, put in Marian's: row (or for the
// output layer's [D, V], column) m is our new_id_of[m]; <pad> and <s> leave.
std::vector<MarianItem> in_marian_ids(std::vector<MarianItem> items, const std::vector<int>& new_id_of) {
  const auto index = torch::tensor(std::vector<int64_t>(new_id_of.begin(), new_id_of.end()));
  for (auto& item : items) {
    int axis = -1;
    if (item.name == "Wemb" || item.name == "encoder_Wemb" || item.name == "decoder_Wemb") axis = 0;
    if (item.name == "decoder_ff_logit_out_W" || item.name == "decoder_ff_logit_out_b") axis = 1;
    if (axis < 0) continue;
    auto value = torch::empty(std::vector<int64_t>(item.shape.begin(), item.shape.end()), torch::kFloat32);
    std::memcpy(value.data_ptr(), item.bytes.data(), item.bytes.size());
    value = value.index_select(axis, index).contiguous();
    item.shape[axis] = static_cast<int32_t>(new_id_of.size());
    item.bytes.assign(static_cast<const char*>(value.data_ptr()), value.numel() * sizeof(float));
  }
  for (auto& item : items)
    if (item.name == kMarianModelConfigItem) {
      auto text = marian_config_text(item);
      const auto ours = std::to_string(new_id_of.size() + 2), marian = std::to_string(new_id_of.size());
      const auto at = text.find("dim-vocabs: [" + ours + ", " + ours + "]");
      REQUIRE(at != std::string::npos);
      text.replace(at, std::string("dim-vocabs: [" + ours + ", " + ours + "]").size(),
                   "dim-vocabs: [" + marian + ", " + marian + "]");
      item = marian_config_item(text);
    }
  return items;
}

}  // namespace

TEST_CASE("SentencePiece ids: Marian's vocabulary gets ours, segmenting as before", "[export][marian][tokenizer]") {
  const auto original = read_file(marian_vocabulary_path(), "fixture");
  CHECK_THROWS_WITH(Tokenizer::from_serialized(original, "numbers.spm"), HasSubstring("fixed special ids"));
  const auto reordered = with_our_special_ids(original, "numbers.spm");
  REQUIRE(reordered.new_id_of.size() == 60);
  CHECK(reordered.vocab_size == 62);  // <pad> and <s> added
  CHECK(reordered.new_id_of[0] == SpecialIds::kEos);
  CHECK(reordered.new_id_of[1] == SpecialIds::kUnk);
  CHECK(reordered.new_id_of[2] == 4);
  CHECK(reordered.new_id_of[59] == 61);
  const auto tokenizer = Tokenizer::from_serialized(reordered.serialized, "reordered");
  CHECK(tokenizer.vocab_size() == 62);
  CHECK(tokenizer.piece(SpecialIds::kPad) == "<pad>");
  CHECK(tokenizer.piece(SpecialIds::kBos) == "<s>");
  CHECK(tokenizer.piece(SpecialIds::kEos) == "</s>");
  std::vector<int> expected;
  for (const int id : kMarianIds) expected.push_back(reordered.new_id_of[id]);
  CHECK(tokenizer.encode("five hundred") == expected);
  CHECK(tokenizer.decode(tokenizer.encode("five hundred")) == "five hundred");
  // Ours already: the same ids, each piece where it was.
  const auto again = with_our_special_ids(reordered.serialized, "again");
  CHECK(again.vocab_size == 62);
  for (int id = 0; id < 62; ++id) CHECK(again.new_id_of[id] == id);

  CHECK_THROWS_WITH(with_our_special_ids("\x0a\xff\xff", "junk.spm"), HasSubstring("not a SentencePiece model: junk.spm"));
  CHECK_THROWS_WITH(with_our_special_ids(std::string("\x12\x00", 2), "empty.spm"), HasSubstring("no pieces"));
}

TEST_CASE("Marian import: a model in Marian's ids computes what its original computes", "[export][marian]") {
  ScratchDir dir;
  const auto reordered = with_our_special_ids(read_file(marian_vocabulary_path(), "fixture"), "numbers.spm");
  const auto tokenizer = Tokenizer::from_serialized(reordered.serialized, "numbers.spm");
  Config config;
  auto& x = config.model.section<TransformerConfig>();
  config.model.source_vocab = config.model.target_vocab = tokenizer.vocab_size();
  x.d_model = 8, x.heads = 2, x.ffn_dim = 16, x.encoder_layers = 1, x.decoder_layers = 2, x.max_positions = 32;
  test::use_marian_choices(x);
  x.share_embeddings = true, x.tie_output = true, x.output_bias = true, x.ffn_activation = "swish";
  x.decoder_autoreg = GENERATE(as<std::string>(), "self_attention", "ssru");  // ssru: Firefox's students
  x.norm = GENERATE(as<std::string>(), "post", "pre_query");  // pre_query: Marian's pre-norm before 1.11
  torch::manual_seed(5);
  auto model = build_model(config.model);
  {
    torch::NoGradGuard no_grad;
    model->named_parameters()["output_bias"].normal_();
  }
  model->eval();
  const LoadedModel original{config, model, tokenizer, tokenizer};

  // Marian's form of it: its items in Marian's ids, with Marian's vocabulary.
  const auto marian = marian_model(original, "original.pt");
  const auto path = dir.file("model.bin");
  {
    AtomicFileWriter file(path);
    write_marian_binary(in_marian_ids(marian.items, reordered.new_id_of), [&](std::string_view b) { file.write(std::string(b)); });
    file.commit();
  }
  const auto imported = import_marian(path, {marian_vocabulary_path()});
  const auto& loaded = imported.loaded;
  CHECK(loaded.config.model.source_vocab == 62);
  CHECK(loaded.config.model.section<TransformerConfig>().output_bias);
  CHECK(loaded.config.model.section<TransformerConfig>().ffn_activation == "swish");
  CHECK(loaded.config.model.section<TransformerConfig>().decoder_autoreg == x.decoder_autoreg);
  CHECK(loaded.config.model.section<TransformerConfig>().norm == x.norm);
  CHECK(loaded.source_tokenizer.serialized() == reordered.serialized);

  // The same logits for every token but <pad> and <s>, which Marian's vocabulary does not have
  // (the import gives them a bias of -1e9).
  torch::NoGradGuard no_grad;
  const auto source = torch::tensor(std::vector<int64_t>{33, 42, 51, 36, 20, SpecialIds::kEos}).unsqueeze(0);
  const auto target = torch::tensor(std::vector<int64_t>{SpecialIds::kBos, 25, 30, 7}).unsqueeze(0);
  const auto expected = original.model->forward(source, target).logits;
  const auto actual = loaded.model->forward(source, target).logits;
  std::vector<int64_t> kept;
  for (int64_t id = 0; id < 62; ++id)
    if (id != SpecialIds::kPad && id != SpecialIds::kBos) kept.push_back(id);
  const auto columns = torch::tensor(kept);
  CHECK((expected.index_select(2, columns) - actual.index_select(2, columns)).abs().max().item<float>() < 1e-5);
  CHECK(actual.select(2, SpecialIds::kPad).max().item<float>() < -1e8);
  CHECK(actual.select(2, SpecialIds::kBos).max().item<float>() < -1e8);
  if (x.norm != "pre_query") return;
  // The same pre-norm items written by Marian 1.11 or later were trained with normalized keys
  // and values: our "pre". Before 1.11 (or with no version, as our export writes): pre_query.
  for (const auto& [version, norm] : std::vector<std::pair<std::string, std::string>>{
           {"v1.11.0 f00d1e3 2022-02-08", "pre"}, {"v1.12.0", "pre"}, {"v1.10.25 6f6d4846 2021-09-20", "pre_query"}}) {
    INFO(version);
    auto items = in_marian_ids(marian.items, reordered.new_id_of);
    for (auto& item : items)
      if (item.name == kMarianModelConfigItem) item = marian_config_item("version: " + version + "\n" + marian_config_text(item));
    const auto versioned = dir.file("versioned.bin");
    {
      AtomicFileWriter file(versioned);
      write_marian_binary(items, [&](std::string_view b) { file.write(std::string(b)); });
      file.commit();
    }
    const auto read = import_marian(versioned, {marian_vocabulary_path()});
    CHECK(read.loaded.config.model.section<TransformerConfig>().norm == norm);
    CHECK(std::any_of(read.notes.begin(), read.notes.end(), [&](const std::string& note) {
      return note.find("pre-norm, written by Marian " + version + ": ") != std::string::npos;
    }));
  }
}

TEST_CASE("Marian import: what our Transformer cannot compute is refused by name", "[export][marian]") {
  ScratchDir dir;
  auto write = [&](const std::string& yaml, std::vector<MarianItem> items = {}) {
    items.push_back(marian_config_item(yaml));
    const auto path = dir.file("m.bin");
    std::string bytes;
    write_marian_binary(items, [&](std::string_view b) { bytes.append(b); });
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  };
  const std::string sizes = "dim-emb: 8\ntransformer-heads: 2\ntransformer-dim-ffn: 16\nenc-depth: 1\ndec-depth: 1\n"
                            "dim-vocabs: [60, 60]\n";
  const auto vocabulary = marian_vocabulary_path();
  // Pre-norm without a final norm (Marian before 1.10 had no transformer-postprocess-top).
  CHECK_THROWS_WITH(import_marian(write("type: transformer\ntransformer-preprocess: n\ntransformer-postprocess: da\n"
                                        "transformer-decoder-autoreg: rnn\n" + sizes),
                                  {vocabulary}),
                    HasSubstring("transformer-preprocess \"n\", transformer-postprocess \"da\", "
                                 "transformer-postprocess-top \"\"") &&
                        HasSubstring("dec-cell: gru"));
  CHECK_THROWS_WITH(import_marian(write("type: transformer\ntransformer-postprocess-emb: nd\n" + sizes), {vocabulary}),
                    HasSubstring("transformer-postprocess-emb: nd"));
  CHECK_THROWS_WITH(import_marian(write("type: transformer\ntransformer-decoder-autoreg: average-attention\n" + sizes),
                                  {vocabulary}),
                    HasSubstring("transformer-decoder-autoreg: average-attention"));
  CHECK_THROWS_WITH(import_marian(write("type: transformer\ntransformer-decoder-autoreg: rnn\ndec-cell: ssru\n"
                                        "transformer-rnn-projection: true\nlayer-normalization: true\n" + sizes),
                                  {vocabulary}),
                    HasSubstring("transformer-rnn-projection: true") && HasSubstring("layer-normalization: true"));
  CHECK_THROWS_WITH(import_marian(write("type: s2s\n" + sizes), {vocabulary}), HasSubstring("type: s2s"));
  CHECK_THROWS_WITH(import_marian(write("type: transformer\ndim-vocabs: [60, 60]\n"), {vocabulary}),
                    HasSubstring("has no transformer-dim-ffn"));
  CHECK_THROWS_WITH(import_marian(write("type: transformer\n" + sizes), {vocabulary}), HasSubstring("no item Wemb") ||
                    HasSubstring("no item encoder_Wemb"));
  CHECK_THROWS_WITH(import_marian(write("type: transformer\ndim-emb: 8\ntransformer-heads: 2\ntransformer-dim-ffn: 16\n"
                                        "enc-depth: 1\ndec-depth: 1\ndim-vocabs: [50, 60]\n"),
                                  {vocabulary}),
                    HasSubstring("60 pieces, but") && HasSubstring("source vocabulary of 50"));
  std::ofstream(dir.file("broken.npz"), std::ios::binary) << std::string("PK\x03\x04 not really", 16);
  CHECK_THROWS_WITH(import_marian(dir.file("broken.npz"), {vocabulary}), HasSubstring("not a zip archive"));
  MarianItem int8_weight;
  int8_weight.name = "Wemb";
  int8_weight.type = MarianType::intgemm8;
  int8_weight.shape = {60, 8};
  int8_weight.bytes = std::string(60 * 8 + 4, '\0');
  CHECK_THROWS_WITH(import_marian(write("type: transformer\ntied-embeddings-all: true\n" + sizes, {int8_weight}), {vocabulary}),
                    HasSubstring("Wemb has quantization multiplier"));
}

TEST_CASE("Marian .npz: arrays written as NumPy and Marian's cnpy read them, read back", "[export][marian]") {
  MarianItem weights;
  weights.name = "encoder_l1_ffn_W1";
  weights.shape = {2, 3};
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  weights.bytes.assign(reinterpret_cast<const char*>(values.data()), sizeof(float) * values.size());
  MarianItem bias = weights;
  bias.name = "encoder_l1_ffn_b1";
  bias.shape = {6};
  const auto npz = marian_npz_bytes({weights, bias, marian_config_item("type: transformer\n")});
  CHECK(npz.compare(0, 4, "PK\x03\x04") == 0);
  // Stored, not compressed: each array's header is readable in place, as NumPy writes it.
  CHECK(npz.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") != std::string::npos);
  CHECK(npz.find("'shape': (6,), }") != std::string::npos);
  CHECK(npz.find("encoder_l1_ffn_W1.npy") != std::string::npos);
  const auto items = read_marian_npz(npz, "m.npz");
  REQUIRE(items.size() == 3);
  CHECK(items[0].name == "encoder_l1_ffn_W1");
  CHECK(items[0].shape == std::vector<int32_t>{2, 3});
  CHECK(items[0].bytes == weights.bytes);
  CHECK(items[1].shape == std::vector<int32_t>{6});
  CHECK(marian_config_text(items[2]) == "type: transformer\n");
  // Damaged: refused with the file named, never a crash.
  for (const size_t cut : std::vector<size_t>{10, npz.size() / 2, npz.size() - 30}) {
    INFO("cut at " << cut);
    CHECK_THROWS_WITH(read_marian_npz(std::string_view(npz).substr(0, cut), "cut.npz"), HasSubstring("cut.npz"));
  }
}

TEST_CASE("Marian import: OPUS-MT's form, an .npz with a vocab.yml whose ids are not SentencePiece's", "[export][marian]") {
  ScratchDir dir;
  const auto spm = read_file(marian_vocabulary_path(), "fixture");
  const auto own = with_our_special_ids(spm, "numbers.spm");
  // Marian's ids: </s> 0, <unk> 1, then the pieces in reverse, and one of another language.
  const auto tokenizer_pieces = [&] {
    const auto t = Tokenizer::from_serialized(own.serialized, "own");
    std::vector<std::string> pieces;
    for (int id = 4; id < t.vocab_size(); ++id) pieces.push_back(t.piece(id));
    return pieces;
  }();
  std::vector<std::string> marian_order{"</s>", "<unk>"};
  marian_order.insert(marian_order.end(), tokenizer_pieces.rbegin(), tokenizer_pieces.rend());
  marian_order.push_back("▁Haus");
  {
    std::ofstream yml(dir.file("vocab.yml"));
    for (size_t id = 0; id < marian_order.size(); ++id) yml << "\"" << marian_order[id] << "\": " << id << "\n";
  }
  const auto listed = with_our_special_ids(spm, "numbers.spm", marian_order);
  CHECK(listed.new_id_of.size() == 61);
  CHECK(listed.vocab_size == 63);  // <pad>, <s> and the other language's piece added
  CHECK(listed.unlisted == 0);
  const auto tokenizer = Tokenizer::from_serialized(listed.serialized, "listed");
  CHECK(tokenizer.piece(listed.new_id_of[2]) == marian_order[2]);
  CHECK(tokenizer.piece(listed.new_id_of[60]) == "▁Haus");
  CHECK(tokenizer.decode(tokenizer.encode("five hundred")) == "five hundred");
  for (const int id : tokenizer.encode("five hundred")) CHECK(tokenizer.piece(id) != "▁Haus");

  Config config;
  auto& x = config.model.section<TransformerConfig>();
  config.model.source_vocab = config.model.target_vocab = tokenizer.vocab_size();
  x.d_model = 8, x.heads = 2, x.ffn_dim = 16, x.encoder_layers = 1, x.decoder_layers = 1, x.max_positions = 32;
  test::use_marian_choices(x);
  x.share_embeddings = true, x.tie_output = true, x.output_bias = true;
  torch::manual_seed(9);
  auto model = build_model(config.model);
  model->eval();
  const LoadedModel original{config, model, tokenizer, tokenizer};
  const auto marian = marian_model(original, "original.pt");
  std::ofstream(dir.file("model.npz"), std::ios::binary) << marian_npz_bytes(in_marian_ids(marian.items, listed.new_id_of));
  const auto imported = import_marian(dir.file("model.npz"), {marian_vocabulary_path()}, {dir.file("vocab.yml")});
  CHECK(imported.loaded.source_tokenizer.serialized() == listed.serialized);
  torch::NoGradGuard no_grad;
  const auto source = torch::tensor(std::vector<int64_t>{10, 20, 30, SpecialIds::kEos}).unsqueeze(0);
  const auto target = torch::tensor(std::vector<int64_t>{SpecialIds::kBos, 40, 50}).unsqueeze(0);
  std::vector<int64_t> kept;
  for (int64_t id = 0; id < tokenizer.vocab_size(); ++id)
    if (id != SpecialIds::kPad && id != SpecialIds::kBos) kept.push_back(id);
  const auto columns = torch::tensor(kept);
  const auto expected = original.model->forward(source, target).logits.index_select(2, columns);
  const auto actual = imported.loaded.model->forward(source, target).logits.index_select(2, columns);
  CHECK((expected - actual).abs().max().item<float>() < 1e-5);

  std::ofstream(dir.file("bad.yml")) << "\"</s>\": 0\n\"<unk>\": 0\n";
  CHECK_THROWS_WITH(import_marian(dir.file("model.npz"), {marian_vocabulary_path()}, {dir.file("bad.yml")}),
                    HasSubstring("bad.yml: id 0 of"));
}

namespace {

// A weight item quantized as Marian's converter does for Firefox's models (intgemm8): int8 =
// round(value * q), q = 127 / max |value|, the values of a matrix other than an embedding
// stored transposed, q after them.
MarianItem quantized_like_marian(const MarianItem& item) {
  auto value = torch::empty({item.shape[0], item.shape[1]}, torch::kFloat32);
  std::memcpy(value.data_ptr(), item.bytes.data(), item.bytes.size());
  const float q = 127.0f / value.abs().max().item<float>();
  if (item.name.find("Wemb") == std::string::npos) value = value.t();
  const auto values = value.mul(q).round().clamp(-127, 127).to(torch::kInt8).contiguous();
  MarianItem result = item;
  result.type = MarianType::intgemm8;
  result.bytes.assign(static_cast<const char*>(values.data_ptr()), static_cast<size_t>(values.numel()));
  result.bytes.append(reinterpret_cast<const char*>(&q), sizeof q);
  return result;
}

// A tiny shared, tied Transformer with Marian's choices, in eval mode (the task's tokenizer).
LoadedModel shared_marian_like_model(const ScratchDir& dir) {
  auto loaded = test::random_model(dir, "transformer", 4);
  auto& x = loaded.config.model.section<TransformerConfig>();
  x.d_model = 8, x.heads = 2, x.ffn_dim = 16, x.encoder_layers = 1, x.decoder_layers = 1, x.max_positions = 32;
  test::use_marian_choices(x);
  x.share_embeddings = true, x.tie_output = true;
  torch::manual_seed(4);
  loaded.model = build_model(loaded.config.model);
  loaded.model->eval();
  return loaded;
}

}  // namespace

TEST_CASE("Marian import: Firefox's int8 (intgemm8) weights are dequantized", "[export][marian]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  const auto loaded = shared_marian_like_model(dir);
  auto items = marian_model(loaded, "original.pt").items;
  MarianItem multiplier;  // as Firefox's models carry them for int8shiftAlphaAll
  multiplier.name = "encoder_l1_ffn_W1_QuantMultA";
  multiplier.shape = {1};
  const float alpha = 12.5f;
  multiplier.bytes.assign(reinterpret_cast<const char*>(&alpha), sizeof alpha);
  for (auto& item : items)
    if (item.type == MarianType::float32 && item.shape.size() == 2 && item.shape[0] > 1) {  // matrices, not biases
      const auto quantized = quantized_like_marian(item);
      CHECK(intgemm8_item(item).bytes == quantized.bytes);  // the export's --int8-weights writes the same
      item = quantized;
    }
  items.push_back(multiplier);
  {
    AtomicFileWriter file(dir.file("int8.bin"));
    write_marian_binary(items, [&](std::string_view b) { file.write(std::string(b)); });
    file.commit();
  }
  const auto imported = import_marian(dir.file("int8.bin"), {dir.file("spm.model")});
  std::string notes;
  for (const auto& note : imported.notes) notes += note + "\n";
  CHECK_THAT(notes, HasSubstring("weights were int8 (intgemm8), dequantized"));
  CHECK_THAT(notes, HasSubstring("activation multipliers (_QuantMultA) not used"));
  // Each weight is int8 / q of ours: within half a step of the original, and exactly that.
  auto original = loaded.model->named_parameters();
  auto now = imported.loaded.model->named_parameters();
  for (const auto* name : {"encoder.0.feed_forward.inner.weight", "decoder.0.feed_forward.outer.weight",
                           "embedding.weight"}) {
    INFO(name);
    const auto before = original[name];
    const float q = 127.0f / before.abs().max().item<float>();
    const auto expected = before.mul(q).round().clamp(-127, 127).mul(1.0f / q);
    CHECK((now[name] - expected).abs().max().item<float>() < 1e-6);
    CHECK((now[name] - before).abs().max().item<float>() <= 0.5f / q + 1e-6f);
  }
}

TEST_CASE("Marian import: float16 weights (.bin and .npz) are widened to float32", "[export][marian]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  const auto loaded = shared_marian_like_model(dir);
  auto items = marian_model(loaded, "original.pt").items;
  int halved = 0;
  for (auto& item : items) {
    if (item.type != MarianType::float32) continue;
    auto value = torch::empty({item.elements()}, torch::kFloat32);
    std::memcpy(value.data_ptr(), item.bytes.data(), item.bytes.size());
    const auto half = value.to(torch::kFloat16).contiguous();
    item.type = MarianType::float16;
    item.bytes.assign(static_cast<const char*>(half.data_ptr()), static_cast<size_t>(half.nbytes()));
    ++halved;
  }
  {
    AtomicFileWriter file(dir.file("half.bin"));
    write_marian_binary(items, [&](std::string_view b) { file.write(std::string(b)); });
    file.commit();
  }
  {
    AtomicFileWriter file(dir.file("half.npz"));
    file.write(marian_npz_bytes(items));
    file.commit();
  }
  for (const auto* name : {"half.bin", "half.npz"}) {
    INFO(name);
    const auto imported = import_marian(dir.file(name), {dir.file("spm.model")});
    CHECK(std::any_of(imported.notes.begin(), imported.notes.end(), [&](const std::string& note) {
      return note.find(std::to_string(halved) + " weights were float16, widened") != std::string::npos;
    }));
    // Every weight is the original rounded to float16, exactly.
    auto original = loaded.model->named_parameters();
    auto now = imported.loaded.model->named_parameters();
    for (const auto* weight : {"encoder.0.feed_forward.inner.weight", "decoder.0.cross_attention.query.bias",
                               "decoder.0.feed_forward_norm.weight"}) {
      INFO(weight);
      CHECK(torch::equal(now[weight], original[weight].to(torch::kFloat16).to(torch::kFloat32)));
    }
  }
}
