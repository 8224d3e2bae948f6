// The CTranslate2 exporter: model.bin read back here byte by byte as CTranslate2 4.x's loader
// reads it (src/models/model.cc), names and shapes worked out by hand for a model of width 4,
// and the model directory's other files. CI has no CTranslate2; bench/ctranslate2_compare.sh
// checks translations with a real one.
#include "support/catch.h"
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "nmt/base/error.h"
#include "nmt/export/ctranslate2_export.h"
#include "nmt/models/registry.h"
#include "nmt/models/transformer/transformer_config.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

// One variable as the file stores it.
struct StoredVariable {
  std::vector<uint32_t> shape;
  uint8_t type = 255;
  std::string bytes;
};

struct StoredModel {
  uint32_t version = 0;
  std::string spec;
  uint32_t revision = 0;
  std::vector<std::string> order;  // names as they follow each other in the file
  std::map<std::string, StoredVariable> variables;
  std::map<std::string, std::string> aliases;
};

// A reader written from the format's description, sharing nothing with the writer.
class Reader {
 public:
  explicit Reader(std::string bytes) : bytes_(std::move(bytes)) {}
  template <class T>
  T value() {
    REQUIRE(at_ + sizeof(T) <= bytes_.size());
    T result;
    std::memcpy(&result, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return result;
  }
  std::string raw(size_t size) {
    REQUIRE(at_ + size <= bytes_.size());
    at_ += size;
    return bytes_.substr(at_ - size, size);
  }
  std::string text() {
    const auto length = value<uint16_t>();  // with its NUL
    REQUIRE(length >= 1);
    auto result = raw(length);
    REQUIRE(result.back() == '\0');
    result.pop_back();
    return result;
  }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  std::string bytes_;
  size_t at_ = 0;
};

StoredModel read_stored(const std::string& bytes) {
  Reader in(bytes);
  StoredModel model;
  model.version = in.value<uint32_t>();
  model.spec = in.text();
  model.revision = in.value<uint32_t>();
  const auto count = in.value<uint32_t>();
  for (uint32_t i = 0; i < count; ++i) {
    const auto name = in.text();
    StoredVariable variable;
    const auto rank = in.value<uint8_t>();
    for (uint8_t d = 0; d < rank; ++d) variable.shape.push_back(in.value<uint32_t>());
    variable.type = in.value<uint8_t>();
    variable.bytes = in.raw(in.value<uint32_t>());
    model.order.push_back(name);
    REQUIRE(model.variables.emplace(name, variable).second);
  }
  const auto aliases = in.value<uint32_t>();
  for (uint32_t i = 0; i < aliases; ++i) {
    const auto alias = in.text();
    model.aliases[alias] = in.text();
  }
  REQUIRE(in.at_end());
  return model;
}

std::string serialized(const Ctranslate2Binary& binary) {
  std::string bytes;
  write_ctranslate2_binary(binary, [&](std::string_view piece) { bytes.append(piece); });
  return bytes;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A Transformer of width 4, 2 heads, FFN 8, one layer each side, 6 positions, on the tiny
// task's tokenizer (60 pieces).
LoadedModel width_four_model(const ScratchDir& dir, const std::string& norm, bool share, bool tie) {
  auto loaded = test::random_model(dir, "transformer", 11);
  auto& x = loaded.config.model.section<TransformerConfig>();
  x.d_model = 4, x.heads = 2, x.ffn_dim = 8, x.encoder_layers = 1, x.decoder_layers = 1, x.max_positions = 6;
  x.norm = norm, x.share_embeddings = share, x.tie_output = tie;
  torch::manual_seed(11);
  loaded.model = build_model(loaded.config.model);
  loaded.model->eval();
  return loaded;
}

float stored_float(const StoredVariable& variable, size_t index) {
  float result;
  std::memcpy(&result, variable.bytes.data() + 4 * index, 4);
  return result;
}

template <class T>
T stored_scalar(const StoredModel& model, const std::string& name) {
  const auto& variable = model.variables.at(name);
  REQUIRE(variable.shape.empty());
  REQUIRE(variable.bytes.size() == sizeof(T));
  T result;
  std::memcpy(&result, variable.bytes.data(), sizeof(T));
  return result;
}

constexpr uint8_t kFloat32 = 0, kInt8 = 1, kInt16 = 2;

}  // namespace

TEST_CASE("CTranslate2 binary: header bytes, strings, sorted variables and aliases", "[export][ctranslate2]") {
  Ctranslate2Binary binary;
  binary.spec = "TransformerSpec";
  binary.revision = 7;
  binary.variables.push_back({"b", torch::tensor({1.5f, -2.0f})});
  binary.variables.push_back(ctranslate2_int16("a", 3));
  binary.aliases.push_back({"c", "b"});
  const auto bytes = serialized(binary);
  // u32 6 | u16 16 "TransformerSpec\0" | u32 7 | u32 2 | "a": u16 2 "a\0", rank 0, type 2, u32 2, 03 00
  // | "b": u16 2 "b\0", rank 1, u32 2, type 0, u32 8, 1.5f -2.0f | u32 1 | u16 2 "c\0" u16 2 "b\0"
  std::string expected("\x06\0\0\0\x10\0TransformerSpec\0\x07\0\0\0\x02\0\0\0", 4 + 2 + 16 + 4 + 4);
  expected += std::string("\x02\0a\0\0\x02\x02\0\0\0\x03\0", 12);
  expected += std::string("\x02\0b\0\x01\x02\0\0\0\0\x08\0\0\0", 14);
  const float values[] = {1.5f, -2.0f};
  expected += std::string(reinterpret_cast<const char*>(values), 8);
  expected += std::string("\x01\0\0\0\x02\0c\0\x02\0b\0", 12);
  CHECK(bytes == expected);

  SECTION("refused: a repeated name, an alias of nothing, a type CTranslate2 has not") {
    binary.variables.push_back({"b", torch::tensor({1.0f})});
    CHECK_THROWS_WITH(serialized(binary), HasSubstring("variable b twice"));
    binary.variables.pop_back();
    binary.aliases.push_back({"d", "missing"});
    CHECK_THROWS_WITH(serialized(binary), HasSubstring("alias d names no variable"));
    binary.aliases.pop_back();
    binary.variables.push_back({"e", torch::tensor({1.0}, torch::kFloat64)});
    CHECK_THROWS_AS(serialized(binary), Error);
  }
}

TEST_CASE("CTranslate2 export: a pre-norm Transformer's TransformerSpec layout", "[export][ctranslate2]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  const auto loaded = width_four_model(dir, "pre", /*share=*/false, /*tie=*/true);
  const auto model = ctranslate2_model(loaded, "tiny.pt");
  const auto stored = read_stored(serialized(model.binary));
  CHECK(stored.version == 6);
  CHECK(stored.spec == "TransformerSpec");
  CHECK(stored.revision == 7);

  // Every name with its shape and type, worked out from python/ctranslate2/specs for D=4,
  // FFN 8, V=60, 6 positions; 4-byte floats, so bytes = 4 x elements.
  using Shape = std::vector<uint32_t>;
  const std::map<std::string, std::pair<Shape, uint8_t>> expected{
      {"decoder/activation", {{}, kInt8}},
      {"decoder/alibi", {{}, kInt8}},
      {"decoder/alibi_use_positive_positions", {{}, kInt8}},
      {"decoder/alignment_heads", {{}, kInt16}},
      {"decoder/alignment_layer", {{}, kInt16}},
      {"decoder/embeddings/weight", {{60, 4}, kFloat32}},
      {"decoder/layer_0/attention/layer_norm/beta", {{4}, kFloat32}},
      {"decoder/layer_0/attention/layer_norm/gamma", {{4}, kFloat32}},
      {"decoder/layer_0/attention/linear_0/bias", {{4}, kFloat32}},
      {"decoder/layer_0/attention/linear_0/weight", {{4, 4}, kFloat32}},
      {"decoder/layer_0/attention/linear_1/bias", {{8}, kFloat32}},
      {"decoder/layer_0/attention/linear_1/weight", {{8, 4}, kFloat32}},
      {"decoder/layer_0/attention/linear_2/bias", {{4}, kFloat32}},
      {"decoder/layer_0/attention/linear_2/weight", {{4, 4}, kFloat32}},
      {"decoder/layer_0/ffn/layer_norm/beta", {{4}, kFloat32}},
      {"decoder/layer_0/ffn/layer_norm/gamma", {{4}, kFloat32}},
      {"decoder/layer_0/ffn/linear_0/bias", {{8}, kFloat32}},
      {"decoder/layer_0/ffn/linear_0/weight", {{8, 4}, kFloat32}},
      {"decoder/layer_0/ffn/linear_1/bias", {{4}, kFloat32}},
      {"decoder/layer_0/ffn/linear_1/weight", {{4, 8}, kFloat32}},
      {"decoder/layer_0/self_attention/layer_norm/beta", {{4}, kFloat32}},
      {"decoder/layer_0/self_attention/layer_norm/gamma", {{4}, kFloat32}},
      {"decoder/layer_0/self_attention/linear_0/bias", {{12}, kFloat32}},
      {"decoder/layer_0/self_attention/linear_0/weight", {{12, 4}, kFloat32}},
      {"decoder/layer_0/self_attention/linear_1/bias", {{4}, kFloat32}},
      {"decoder/layer_0/self_attention/linear_1/weight", {{4, 4}, kFloat32}},
      {"decoder/layer_norm/beta", {{4}, kFloat32}},
      {"decoder/layer_norm/gamma", {{4}, kFloat32}},
      {"decoder/num_heads", {{}, kInt16}},
      {"decoder/position_encodings/encodings", {{6, 4}, kFloat32}},
      {"decoder/pre_norm", {{}, kInt8}},
      {"decoder/scale_alibi", {{}, kInt8}},
      {"decoder/scale_embeddings", {{}, kInt8}},
      {"decoder/start_from_zero_embedding", {{}, kInt8}},
      {"encoder/activation", {{}, kInt8}},
      {"encoder/embeddings_0/weight", {{60, 4}, kFloat32}},
      {"encoder/embeddings_merge", {{}, kInt8}},
      {"encoder/layer_0/ffn/layer_norm/beta", {{4}, kFloat32}},
      {"encoder/layer_0/ffn/layer_norm/gamma", {{4}, kFloat32}},
      {"encoder/layer_0/ffn/linear_0/bias", {{8}, kFloat32}},
      {"encoder/layer_0/ffn/linear_0/weight", {{8, 4}, kFloat32}},
      {"encoder/layer_0/ffn/linear_1/bias", {{4}, kFloat32}},
      {"encoder/layer_0/ffn/linear_1/weight", {{4, 8}, kFloat32}},
      {"encoder/layer_0/self_attention/layer_norm/beta", {{4}, kFloat32}},
      {"encoder/layer_0/self_attention/layer_norm/gamma", {{4}, kFloat32}},
      {"encoder/layer_0/self_attention/linear_0/bias", {{12}, kFloat32}},
      {"encoder/layer_0/self_attention/linear_0/weight", {{12, 4}, kFloat32}},
      {"encoder/layer_0/self_attention/linear_1/bias", {{4}, kFloat32}},
      {"encoder/layer_0/self_attention/linear_1/weight", {{4, 4}, kFloat32}},
      {"encoder/layer_norm/beta", {{4}, kFloat32}},
      {"encoder/layer_norm/gamma", {{4}, kFloat32}},
      {"encoder/multi_query_attention", {{}, kInt8}},
      {"encoder/num_heads", {{}, kInt16}},
      {"encoder/pre_norm", {{}, kInt8}},
      {"encoder/scale_embeddings", {{}, kInt8}},
  };
  std::vector<std::string> expected_order;
  for (const auto& [name, layout] : expected) expected_order.push_back(name);  // std::map: sorted
  CHECK(stored.order == expected_order);
  for (const auto& [name, layout] : expected) {
    INFO(name);
    REQUIRE(stored.variables.count(name) == 1);
    const auto& variable = stored.variables.at(name);
    CHECK(variable.shape == layout.first);
    CHECK(variable.type == layout.second);
    size_t elements = 1;
    for (auto size : layout.first) elements *= size;
    CHECK(variable.bytes.size() == elements * (layout.second == kFloat32 ? 4 : layout.second == kInt16 ? 2 : 1));
  }
  const std::map<std::string, std::string> aliases{
      {"decoder/projection/weight", "decoder/embeddings/weight"},
      {"encoder/position_encodings/encodings", "decoder/position_encodings/encodings"}};
  CHECK(stored.aliases == aliases);

  CHECK(stored_scalar<int16_t>(stored, "encoder/num_heads") == 2);
  CHECK(stored_scalar<int16_t>(stored, "decoder/alignment_layer") == 0);  // the only layer
  CHECK(stored_scalar<int16_t>(stored, "decoder/alignment_heads") == 0);  // every head
  CHECK(stored_scalar<int8_t>(stored, "encoder/pre_norm") == 1);
  CHECK(stored_scalar<int8_t>(stored, "decoder/scale_embeddings") == 1);
  CHECK(stored_scalar<int8_t>(stored, "decoder/alibi") == 0);

  // Our positions, interleaved: row p is sin(p), cos(p), sin(p/100), cos(p/100) for D=4.
  const auto& positions = stored.variables.at("decoder/position_encodings/encodings");
  for (int p = 0; p < 6; ++p) {
    CHECK(stored_float(positions, 4 * p + 0) == Approx(std::sin(p)).margin(1e-6));
    CHECK(stored_float(positions, 4 * p + 1) == Approx(std::cos(p)).margin(1e-6));
    CHECK(stored_float(positions, 4 * p + 2) == Approx(std::sin(p / 100.0)).margin(1e-6));
    CHECK(stored_float(positions, 4 * p + 3) == Approx(std::cos(p / 100.0)).margin(1e-6));
  }
  // The weights are the model's own, bit for bit: the fused Q/K/V in our row order.
  const auto qkv = loaded.model->named_parameters()["encoder.0.self_attention.qkv.weight"].contiguous();
  CHECK(stored.variables.at("encoder/layer_0/self_attention/linear_0/weight").bytes ==
        std::string(static_cast<const char*>(qkv.data_ptr()), qkv.numel() * 4));
  const auto embedding = loaded.model->named_parameters()["target_embedding.weight"].contiguous();
  CHECK(stored.variables.at("decoder/embeddings/weight").bytes ==
        std::string(static_cast<const char*>(embedding.data_ptr()), embedding.numel() * 4));

  CHECK(model.config["add_source_eos"] == true);
  CHECK(model.config["add_source_bos"] == false);
  CHECK(model.config["eos_token"] == loaded.target_tokenizer.piece(SpecialIds::kEos));
  CHECK(model.config["decoder_start_token"] == loaded.target_tokenizer.piece(SpecialIds::kBos));
  CHECK(model.config["unk_token"] == loaded.source_tokenizer.piece(SpecialIds::kUnk));
  CHECK(model.config["layer_norm_epsilon"].get<double>() == Approx(1e-5));
  REQUIRE(model.source_vocabulary.size() == 60);
  CHECK(model.source_vocabulary[SpecialIds::kEos] == "</s>");
}

TEST_CASE("CTranslate2 export: post-norm, shared embeddings, an output layer of its own", "[export][ctranslate2]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  const auto loaded = width_four_model(dir, "post", /*share=*/true, /*tie=*/false);
  const auto stored = read_stored(serialized(ctranslate2_model(loaded, "tiny.pt").binary));
  CHECK(stored.variables.count("encoder/layer_norm/gamma") == 0);  // post-norm: no final norms
  CHECK(stored.variables.count("decoder/layer_norm/gamma") == 0);
  CHECK(stored.variables.count("encoder/embeddings_0/weight") == 0);
  CHECK(stored.aliases.at("encoder/embeddings_0/weight") == "decoder/embeddings/weight");
  CHECK(stored.aliases.count("decoder/projection/weight") == 0);
  CHECK(stored.variables.at("decoder/projection/weight").shape == std::vector<uint32_t>{60, 4});
  CHECK(stored_scalar<int8_t>(stored, "encoder/pre_norm") == 0);
  CHECK(stored_scalar<int8_t>(stored, "decoder/pre_norm") == 0);
  const auto output = loaded.model->named_parameters()["output_weight"].contiguous();
  CHECK(stored.variables.at("decoder/projection/weight").bytes ==
        std::string(static_cast<const char*>(output.data_ptr()), output.numel() * 4));
}

TEST_CASE("CTranslate2 export: the model directory, whole or not at all", "[export][ctranslate2]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  const auto loaded = width_four_model(dir, "pre", false, true);
  const auto out = dir.file("nested/ct2");
  export_ctranslate2(loaded, "tiny.pt", out, /*replace=*/false);
  const auto stored = read_stored(read_all(out + "/model.bin"));
  CHECK(stored.spec == "TransformerSpec");
  const auto config = nlohmann::json::parse(read_all(out + "/config.json"));
  CHECK(config["add_source_eos"] == true);
  const auto vocabulary = nlohmann::json::parse(read_all(out + "/shared_vocabulary.json"));
  REQUIRE(vocabulary.size() == 60);
  CHECK(vocabulary[3] == "</s>");
  CHECK(read_all(out + "/source_spm.model") == loaded.source_tokenizer.serialized());
  CHECK(read_all(out + "/target_spm.model") == loaded.target_tokenizer.serialized());
  const auto entries = std::distance(std::filesystem::directory_iterator(dir.path() / "nested"),
                                     std::filesystem::directory_iterator());
  CHECK(entries == 1);  // no temporary left beside it

  SECTION("a shortlist as CTranslate2's vocabulary map") {
    Shortlist shortlist(loaded.source_tokenizer.vocab_size(), loaded.target_tokenizer.vocab_size());
    shortlist.set_always({{5, 0.2f}, {7, 0.1f}});
    shortlist.set_translations(9, {{11, 0.6f}, {12, 0.3f}});
    export_ctranslate2(loaded, "tiny.pt", out, /*replace=*/true, &shortlist);
    const auto& t = loaded.target_tokenizer;
    CHECK(read_all(out + "/vmap.txt") == "\t" + t.piece(5) + " " + t.piece(7) + "\n" + loaded.source_tokenizer.piece(9) +
                                             "\t" + t.piece(11) + " " + t.piece(12) + "\n");
  }
  SECTION("an existing directory is kept unless replaced") {
    CHECK_THROWS_WITH(export_ctranslate2(loaded, "tiny.pt", out, false), HasSubstring("exists (--force"));
    std::ofstream(out + "/mine.txt") << "kept";
    CHECK(std::filesystem::exists(out + "/mine.txt"));
    export_ctranslate2(loaded, "tiny.pt", out, /*replace=*/true);
    CHECK_FALSE(std::filesystem::exists(out + "/mine.txt"));
    CHECK(std::filesystem::exists(out + "/model.bin"));
  }
  SECTION("an RNN is refused by name, and nothing is created") {
    const auto rnn = test::random_model(dir, "attention", 3);
    CHECK_THROWS_WITH(export_ctranslate2(rnn, "rnn.pt", dir.file("none/ct2"), false),
                      HasSubstring("rnn.pt: a \"attention\" model; CTranslate2 runs Transformers"));
    CHECK_FALSE(std::filesystem::exists(dir.file("none")));
  }
}
