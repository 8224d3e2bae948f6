// Marian's .bin: the file read back here as marian-dev's loader reads it
// (src/common/binary.cpp), damaged files refused with the item named, and our Transformer's
// items under Marian's names (src/models/transformer.h) for a model of width 4.
// tests/apps/marian_test.sh checks translations with Marian itself.
#include "support/catch.h"
#include <torch/torch.h>

#include <cstring>
#include <map>

#include "nmt/base/error.h"
#include "nmt/export/ctranslate2_export.h"
#include "nmt/export/marian_export.h"
#include "nmt/export/marian_format.h"
#include "nmt/models/registry.h"
#include "nmt/models/transformer/transformer_config.h"
#include "nmt/text/tokenizer.h"
#include "support/tiny_task.h"

using namespace nmt;
using nmt::test::ScratchDir;

namespace {

std::string marian_bytes(const std::vector<MarianItem>& items) {
  std::string bytes;
  write_marian_binary(items, [&](std::string_view piece) { bytes.append(piece); });
  return bytes;
}

template <class T>
T stored_at(const std::string& bytes, size_t offset) {
  REQUIRE(offset + sizeof(T) <= bytes.size());
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

MarianItem float_item_of(std::string name, std::vector<int32_t> shape, std::vector<float> values) {
  MarianItem item;
  item.name = std::move(name);
  item.shape = std::move(shape);
  item.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return item;
}

std::vector<float> marian_values(const MarianItem& item) {
  std::vector<float> values(item.bytes.size() / sizeof(float));
  std::memcpy(values.data(), item.bytes.data(), item.bytes.size());
  return values;
}

LoadedModel marian_like_model(const ScratchDir& dir, bool share, bool tie) {
  auto loaded = test::random_model(dir, "transformer", 7);
  auto& x = loaded.config.model.section<TransformerConfig>();
  x.d_model = 4, x.heads = 2, x.ffn_dim = 8, x.encoder_layers = 1, x.decoder_layers = 2, x.max_positions = 6;
  test::use_marian_choices(x);
  x.share_embeddings = share, x.tie_output = tie;
  torch::manual_seed(7);
  loaded.model = build_model(loaded.config.model);
  loaded.model->eval();
  return loaded;
}

std::map<std::string, const MarianItem*> items_by_name(const std::vector<MarianItem>& items) {
  std::map<std::string, const MarianItem*> named;
  for (const auto& item : items) named[item.name] = &item;
  return named;
}

}  // namespace

TEST_CASE("Marian binary: the layout marian-dev's loader reads", "[export][marian]") {
  const auto bytes = marian_bytes({float_item_of("Wemb", {2, 3}, {1, 2, 3, 4, 5, 6}), marian_config_item("type: transformer\n")});
  CHECK(stored_at<uint64_t>(bytes, 0) == 1);   // file version
  CHECK(stored_at<uint64_t>(bytes, 8) == 2);   // items
  // Headers: name length with NUL, type, rank, bytes (each item padded to 256).
  CHECK(stored_at<uint64_t>(bytes, 16) == 5);
  CHECK(stored_at<uint64_t>(bytes, 24) == 0x0404);
  CHECK(stored_at<uint64_t>(bytes, 32) == 2);
  CHECK(stored_at<uint64_t>(bytes, 40) == 256);
  CHECK(stored_at<uint64_t>(bytes, 48) == 18);  // "special:model.yml" + NUL
  CHECK(stored_at<uint64_t>(bytes, 56) == 0x0101);
  CHECK(stored_at<uint64_t>(bytes, 64) == 1);
  CHECK(stored_at<uint64_t>(bytes, 72) == 256);
  CHECK(std::string(bytes.data() + 80) == "Wemb");
  CHECK(std::string(bytes.data() + 85) == "special:model.yml");
  CHECK(stored_at<int32_t>(bytes, 103) == 2);
  CHECK(stored_at<int32_t>(bytes, 107) == 3);
  CHECK(stored_at<int32_t>(bytes, 111) == 19);  // the YAML text, 18 bytes, and its NUL
  const auto padding = stored_at<uint64_t>(bytes, 115);
  const size_t values = 123 + padding;
  CHECK(values % 256 == 0);
  CHECK(stored_at<float>(bytes, values) == 1.0f);
  CHECK(stored_at<float>(bytes, values + 20) == 6.0f);
  CHECK(std::string(bytes.data() + values + 256) == "type: transformer\n");
  CHECK(bytes.size() == values + 512);

  const auto read = read_marian_binary(bytes, "m.bin");
  REQUIRE(read.size() == 2);
  CHECK(read[0].name == "Wemb");
  CHECK(read[0].shape == std::vector<int32_t>{2, 3});
  CHECK(marian_values(read[0]) == std::vector<float>{1, 2, 3, 4, 5, 6});  // without the padding
  CHECK(marian_config_text(read[1]) == "type: transformer\n");
}

TEST_CASE("Marian binary: a damaged file is an error naming the file, never a crash", "[export][marian]") {
  const auto bytes = marian_bytes({float_item_of("Wemb", {2, 2}, {1, 2, 3, 4}), float_item_of("bias", {1, 2}, {5, 6})});
  // Cut short anywhere before the last item's values: refused, saying where.
  for (size_t length = 0; length < bytes.size() - 256 + 8; ++length) {
    INFO("first " << length << " bytes");
    CHECK_THROWS_WITH(read_marian_binary(std::string_view(bytes).substr(0, length), "cut.bin"),
                      Catch::Matchers::StartsWith("cut.bin: "));
  }
  auto wrong_version = bytes;
  wrong_version[0] = 2;
  CHECK_THROWS_WITH(read_marian_binary(wrong_version, "v.bin"), HasSubstring("file version 2"));
  auto unknown_type = bytes;
  unknown_type[24] = 0x09;  // the first item's type
  CHECK_THROWS_WITH(read_marian_binary(unknown_type, "t.bin"), HasSubstring("item Wemb has type 0x409"));
  auto too_few_bytes = bytes;
  too_few_bytes[72] = 4;  // the last item's byte count: 4 of the 8 its shape [1, 2] needs
  too_few_bytes[73] = 0;
  CHECK_THROWS_WITH(read_marian_binary(too_few_bytes, "b.bin"), HasSubstring("item bias has 4 bytes, its shape needs 8"));
  CHECK_THROWS_WITH(marian_bytes({float_item_of("a", {1}, {1}), float_item_of("a", {1}, {2})}), HasSubstring("item a twice"));
  CHECK_THROWS_WITH(marian_bytes({float_item_of("a", {2}, {1})}), HasSubstring("item a has 4 bytes"));
}

TEST_CASE("Marian export: our Transformer under Marian's names, transposed", "[export][marian]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  const auto loaded = marian_like_model(dir, /*share=*/true, /*tie=*/true);
  const auto model = marian_model(loaded, "tiny.pt");
  CHECK(model.notes.empty());  // epsilon 1e-6: exact
  const auto items = items_by_name(model.items);
  const int32_t v = static_cast<int32_t>(loaded.config.model.target_vocab);
  // Shared and tied: one Wemb; an output bias of zeros but for <pad> and <s>.
  CHECK(items.count("Wemb") == 1);
  CHECK(items.count("encoder_Wemb") == 0);
  CHECK(items.count("decoder_ff_logit_out_W") == 0);
  CHECK(items.at("Wemb")->shape == std::vector<int32_t>{v, 4});
  const auto bias = marian_values(*items.at("decoder_ff_logit_out_b"));
  CHECK(bias[SpecialIds::kPad] == -1e9f);
  CHECK(bias[SpecialIds::kBos] == -1e9f);
  CHECK(bias[SpecialIds::kEos] == 0.0f);
  CHECK(bias[SpecialIds::kUnk] == 0.0f);
  // Q, K, V: the thirds of our stacked projection, each [out, in] written as [in, out].
  const auto parameters = loaded.model->named_parameters();
  const auto qkv = parameters["encoder.0.self_attention.qkv.weight"];
  const auto wk = marian_values(*items.at("encoder_l1_self_Wk"));
  REQUIRE(wk.size() == 16);
  for (int in = 0; in < 4; ++in)
    for (int out = 0; out < 4; ++out) CHECK(wk[in * 4 + out] == qkv[4 + out][in].item<float>());
  CHECK(items.at("encoder_l1_self_bv")->shape == std::vector<int32_t>{1, 4});
  CHECK(items.at("decoder_l2_context_Wk")->shape == std::vector<int32_t>{4, 4});
  CHECK(items.at("decoder_l1_ffn_W1")->shape == std::vector<int32_t>{4, 8});
  CHECK(items.at("decoder_l1_ffn_W2")->shape == std::vector<int32_t>{8, 4});
  CHECK(items.count("decoder_l2_ffn_ffn_ln_scale") == 1);
  CHECK(items.count("decoder_l2_context_Wo_ln_bias") == 1);
  CHECK(items.count("encoder_top_ln_scale") == 0);  // post-norm: no final norms
  // 1 + 2 layers of 4 and 6 attention items x 2, FFN 4, norms 2 x 2 or 3; Wemb, bias, config.
  CHECK(model.items.size() == (8 + 4 + 4) + 2 * (16 + 4 + 6) + 3);
  CHECK(model.config_yaml.find("tied-embeddings-all: true") != std::string::npos);
  CHECK(model.config_yaml.find("transformer-postprocess: dan") != std::string::npos);
  CHECK(model.config_yaml.find("dim-vocabs: [" + std::to_string(v) + ", " + std::to_string(v) + "]") != std::string::npos);
  CHECK(marian_config_text(model.items.back()) == model.config_yaml);
}

TEST_CASE("Marian export: separate embeddings and an output layer of its own", "[export][marian]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  const auto loaded = marian_like_model(dir, /*share=*/false, /*tie=*/false);
  const auto model = marian_model(loaded, "tiny.pt");
  const auto items = items_by_name(model.items);
  CHECK(items.count("Wemb") == 0);
  CHECK(items.count("encoder_Wemb") == 1);
  CHECK(items.count("decoder_Wemb") == 1);
  const auto v = static_cast<int32_t>(loaded.config.model.target_vocab);
  CHECK(items.at("decoder_ff_logit_out_W")->shape == std::vector<int32_t>{4, v});
  CHECK(model.config_yaml.find("tied-embeddings: false") != std::string::npos);
  CHECK(model.config_yaml.find("tied-embeddings-all: false") != std::string::npos);
}

TEST_CASE("Marian export: an SSRU decoder under Marian's DecoderLayerRNN names", "[export][marian]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto loaded = marian_like_model(dir, /*share=*/true, /*tie=*/true);
  loaded.config.model.section<TransformerConfig>().decoder_autoreg = "ssru";
  torch::manual_seed(7);
  loaded.model = build_model(loaded.config.model);
  const auto model = marian_model(loaded, "student.pt");
  const auto items = items_by_name(model.items);
  CHECK(items.count("decoder_l1_self_Wq") == 0);
  CHECK(items.count("decoder_l2_self_Wo_ln_scale") == 0);
  CHECK(items.count("encoder_l1_self_Wq") == 1);
  // W and Wf [in, out] as Marian's dot(x, W) reads them; bf [1, D]; the norm after the cell.
  const auto transform = loaded.model->named_parameters()["decoder.1.ssru.transform.weight"];
  const auto w = marian_values(*items.at("decoder_l2_rnn_W"));
  REQUIRE(w.size() == 16);
  for (int in = 0; in < 4; ++in)
    for (int out = 0; out < 4; ++out) CHECK(w[in * 4 + out] == transform[out][in].item<float>());
  CHECK(items.at("decoder_l1_rnn_Wf")->shape == std::vector<int32_t>{4, 4});
  CHECK(items.at("decoder_l1_rnn_bf")->shape == std::vector<int32_t>{1, 4});
  CHECK(items.count("decoder_l1_rnn_b") == 0);
  CHECK(items.count("decoder_l2_rnn_ffn_ln_scale") == 1);
  CHECK(items.count("decoder_l2_rnn_ffn_ln_bias") == 1);
  CHECK(model.config_yaml.find("transformer-decoder-autoreg: rnn") != std::string::npos);
  CHECK(model.config_yaml.find("dec-cell: ssru") != std::string::npos);
  // CTranslate2 decodes with self-attention only: refused by name.
  CHECK_THROWS_WITH(ctranslate2_model(loaded, "student.pt"), HasSubstring("SSRU"));
}

TEST_CASE("Marian export: pre-norm (pre_query) under Marian's preProcess names, each stack's final norm as _top",
          "[export][marian]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto loaded = marian_like_model(dir, /*share=*/true, /*tie=*/true);
  loaded.config.model.section<TransformerConfig>().norm = "pre_query";
  torch::manual_seed(7);
  loaded.model = build_model(loaded.config.model);
  auto model = marian_model(loaded, "pre.pt");
  auto items = items_by_name(model.items);
  CHECK(items.count("encoder_l1_self_Wo_ln_scale_pre") == 1);
  CHECK(items.count("encoder_l1_self_Wo_ln_scale") == 0);
  CHECK(items.count("encoder_l1_ffn_ffn_ln_bias_pre") == 1);
  CHECK(items.count("decoder_l2_context_Wo_ln_scale_pre") == 1);
  CHECK(items.count("decoder_l2_self_Wo_ln_bias_pre") == 1);
  const auto top = loaded.model->named_parameters()["decoder_norm.weight"];
  REQUIRE(items.count("decoder_top_ln_scale") == 1);
  CHECK(marian_values(*items.at("decoder_top_ln_scale")) ==
        std::vector<float>(top.data_ptr<float>(), top.data_ptr<float>() + top.numel()));
  CHECK(items.count("encoder_top_ln_bias") == 1);
  CHECK(model.config_yaml.find("transformer-preprocess: n\n") != std::string::npos);
  CHECK(model.config_yaml.find("transformer-postprocess: da\n") != std::string::npos);
  CHECK(model.config_yaml.find("transformer-postprocess-top: n\n") != std::string::npos);
  // An SSRU's pre-norm sits under the cell's own prefix (DecoderLayerRNN: preProcess(prefix)).
  loaded.config.model.section<TransformerConfig>().decoder_autoreg = "ssru";
  loaded.model = build_model(loaded.config.model);
  model = marian_model(loaded, "pre-student.pt");
  items = items_by_name(model.items);
  CHECK(items.count("decoder_l1_rnn_ln_scale_pre") == 1);
  CHECK(items.count("decoder_l1_rnn_ffn_ln_scale") == 0);
  // CTranslate2's pre-norm normalizes keys and values: refused by name.
  CHECK_THROWS_WITH(ctranslate2_model(loaded, "pre.pt"), HasSubstring("SSRU"));
  loaded.config.model.section<TransformerConfig>().decoder_autoreg = "self_attention";
  loaded.model = build_model(loaded.config.model);
  CHECK_THROWS_WITH(ctranslate2_model(loaded, "pre.pt"), HasSubstring("pre_query"));
}

TEST_CASE("Marian export: what Marian cannot compute is refused, every reason named", "[export][marian]") {
  ScratchDir dir;
  test::make_tiny_task(dir);
  auto loaded = test::random_model(dir, "transformer", 3);  // our defaults: pre-norm, interleaved, bos
  REQUIRE(loaded.config.model.section<TransformerConfig>().norm == "pre");
  CHECK_THROWS_WITH(marian_model(loaded, "ours.pt"),
                    HasSubstring("norm \"pre\"") &&
                        HasSubstring("positions \"interleaved\"") &&
                        HasSubstring("decoder_start \"bos\""));
  auto gru = test::random_model(dir, "gru", 3);
  CHECK_THROWS_WITH(marian_model(gru, "gru.pt"), HasSubstring("Transformers"));
  auto noted = marian_like_model(dir, true, true);
  noted.config.model.section<TransformerConfig>().layer_norm_epsilon = 1e-5;
  const auto model = marian_model(noted, "noted.pt");
  REQUIRE(model.notes.size() == 1);
  CHECK(model.notes[0].find("epsilon 1e-05") != std::string::npos);
}
