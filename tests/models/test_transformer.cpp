// The Transformer against its own contract: shapes, incremental decoding equal to the
// teacher-forced pass, padding invariance, attention distributions, beam reordering,
// ability to learn, and parameter sharing. Tiny configs keep every case well under a second
// (the overfitting case takes a few).
#include "support/catch.h"

#include <torch/torch.h>

#include <cmath>

#include "nmt/base/error.h"
#include "nmt/models/transformer/transformer.h"
#include "nmt/models/transformer/transformer_config.h"
#include "support/tensor_diff.h"

using nmt::TransformerModel;

namespace {

nmt::ModelConfig small_config(const std::string& norm = "pre") {
  nmt::ModelConfig config;
  config.source_vocab = 20;
  config.target_vocab = 20;
  auto& transformer = config.section<TransformerConfig>();
  transformer.d_model = 32;
  transformer.heads = 2;
  transformer.ffn_dim = 64;
  transformer.encoder_layers = 2;
  transformer.decoder_layers = 2;
  transformer.norm = norm;
  transformer.max_positions = 64;
  return config;
}

std::shared_ptr<TransformerModel> eval_model(const nmt::ModelConfig& config) {
  torch::manual_seed(7);
  auto model = std::make_shared<TransformerModel>(config);
  model->eval();
  return model;
}

torch::Tensor ids(std::vector<std::vector<int64_t>> rows) {
  std::vector<torch::Tensor> tensors;
  for (auto& row : rows) tensors.push_back(torch::tensor(row, torch::kInt64));
  return torch::stack(tensors);
}

// Two sources, the second padded; targets start with bos (2), pad = 0.
const auto kSource = [] { return ids({{5, 6, 7, 8, 3}, {9, 10, 3, 0, 0}}); };
const auto kTarget = [] { return ids({{2, 11, 12, 13}, {2, 14, 15, 0}}); };

using nmt::test::max_diff;

}  // namespace

TEST_CASE("Transformer output shapes", "[transformer]") {
  auto model = eval_model(small_config());
  torch::NoGradGuard no_grad;
  CHECK(model->forward(kSource(), kTarget()).logits.sizes() == torch::IntArrayRef{2, 4, 20});

  auto encoded = model->encode(kSource());
  CHECK(encoded.memory.sizes() == torch::IntArrayRef{2, 5, 32});
  CHECK(encoded.source_mask.sizes() == torch::IntArrayRef{2, 5});

  auto owned = model->initial_state(encoded);
  auto& state = dynamic_cast<nmt::TransformerState&>(*owned);
  CHECK(state.self_attention.keys(0).sizes() == torch::IntArrayRef{2, 2, 0, 16});
  CHECK(state.self_attention.rows().sizes() == torch::IntArrayRef{2, 0});
  REQUIRE(state.memory.size() == 2);
  CHECK(state.memory[1].keys.sizes() == torch::IntArrayRef{2, 2, 5, 16});
  auto out = model->step(torch::full({2}, 2, torch::kInt64), state);
  CHECK(out.scores.log_probs().sizes() == torch::IntArrayRef{2, 20});
  CHECK(out.attention.sizes() == torch::IntArrayRef{2, 5});
  REQUIRE(out.layer_attention.size() == 2);
  for (const auto& layer : out.layer_attention) CHECK(layer.sizes() == torch::IntArrayRef{2, 2, 5});
  CHECK(state.step == 1);
  // A buffer with room for more positions, of which the first state.step are filled.
  const auto& cache = state.self_attention.values(1);
  CHECK(cache.dim() == 4);
  CHECK((cache.size(0) == 2 && cache.size(1) == 2 && cache.size(3) == 16));
  CHECK(cache.size(2) >= state.step);

  CHECK(model->attention_layers() == 2);
  CHECK(model->alignment_layer() == 0);  // penultimate of 2
  auto one_layer = small_config();
  one_layer.section<TransformerConfig>().decoder_layers = 1;
  CHECK(TransformerModel(one_layer).alignment_layer() == 0);
  auto three_layers = small_config();
  three_layers.section<TransformerConfig>().decoder_layers = 3;
  CHECK(TransformerModel(three_layers).alignment_layer() == 1);
}

TEST_CASE("Transformer step-by-step decoding equals the teacher-forced pass", "[transformer]") {
  for (std::string norm : {"pre", "post", "pre_query"}) {
    DYNAMIC_SECTION("norm " << norm) {
      auto model = eval_model(small_config(norm));
      torch::NoGradGuard no_grad;
      auto expected = torch::log_softmax(model->forward(kSource(), kTarget()).logits, -1);
      auto state = model->initial_state(model->encode(kSource()));
      for (int64_t t = 0; t < kTarget().size(1); ++t) {
        auto out = model->step(kTarget().select(1, t), *state);
        CHECK(max_diff(out.scores.log_probs(), expected.select(1, t)) < 1e-5);
      }
    }
  }
}

TEST_CASE("Transformer step that throws leaves its state's caches in place", "[transformer]") {
  auto config = small_config();
  config.section<TransformerConfig>().decoder_autoreg = GENERATE(as<std::string>(), "self_attention", "ssru");  // ssru: its cells
  auto model = eval_model(config);
  torch::NoGradGuard no_grad;
  auto expected = torch::log_softmax(model->forward(kSource(), kTarget()).logits, -1);
  auto state = model->initial_state(model->encode(kSource()));
  auto& transformer_state = dynamic_cast<nmt::TransformerState&>(*state);
  CHECK(max_diff(model->step(kTarget().select(1, 0), *state).scores.log_probs(), expected.select(1, 0)) < 1e-5);
  // The last layer's encoder keys of a wrong width: the step throws after the first
  // layer has written its cache.
  const auto keys = transformer_state.memory.back().keys;
  transformer_state.memory.back().keys = torch::zeros({2, 2, 5, 3});
  CHECK_THROWS(model->step(kTarget().select(1, 1), *state));
  for (size_t layer = 0; layer < transformer_state.recurrent_cells.size(); ++layer)
    CHECK(transformer_state.recurrent_cells[layer].defined());
  if (config.section<TransformerConfig>().decoder_autoreg == "self_attention")
    for (size_t layer = 0; layer < 2; ++layer) {
      CHECK(transformer_state.self_attention.keys(layer).defined());
      CHECK(transformer_state.self_attention.values(layer).defined());
    }
  // The same step again, with the keys back, gives the teacher-forced result.
  transformer_state.memory.back().keys = keys;
  for (int64_t t = 1; t < kTarget().size(1); ++t)
    CHECK(max_diff(model->step(kTarget().select(1, t), *state).scores.log_probs(), expected.select(1, t)) < 1e-5);
}

TEST_CASE("Transformer output does not depend on padding in the batch", "[transformer]") {
  auto model = eval_model(small_config("post"));
  torch::NoGradGuard no_grad;
  auto batched = model->forward(kSource(), ids({{2, 11, 12}, {2, 14, 15}})).logits;
  auto alone = model->forward(ids({{9, 10, 3}}), ids({{2, 14, 15}})).logits;
  CHECK(max_diff(batched[1], alone[0]) < 1e-5);
}

TEST_CASE("Transformer attention rows are distributions that skip padding", "[transformer]") {
  auto model = eval_model(small_config());
  torch::NoGradGuard no_grad;
  auto padding = kSource().eq(0);  // [B, S]
  auto state = model->initial_state(model->encode(kSource()));
  for (int64_t t = 0; t < 3; ++t) {
    auto out = model->step(kTarget().select(1, t), *state);
    CHECK(max_diff(out.attention.sum(-1), torch::ones({2})) < 1e-5);
    CHECK(out.attention.masked_select(padding).abs().max().item<double>() == 0.0);
    for (const auto& layer : out.layer_attention) {
      CHECK(max_diff(layer.sum(-1), torch::ones({2, 2})) < 1e-5);
      CHECK(layer.masked_select(padding.unsqueeze(1)).abs().max().item<double>() == 0.0);
    }
  }
}

TEST_CASE("Transformer decoder state reorders like a beam", "[transformer]") {
  auto model = eval_model(small_config());
  torch::NoGradGuard no_grad;
  auto state = model->initial_state(model->encode(kSource()));
  state->select(torch::tensor({0, 0, 1, 1}, torch::kInt64));  // beam of 2 per sentence
  model->step(torch::full({4}, 2, torch::kInt64), *state);
  model->step(torch::tensor({5, 6, 7, 8}, torch::kInt64), *state);  // hypotheses now differ

  auto index = torch::tensor({1, 0, 3, 2}, torch::kInt64);
  auto tokens = torch::tensor({9, 10, 11, 12}, torch::kInt64);
  auto reordered = state->clone();  // reorder first, then step
  reordered->reorder(index);
  auto first = model->step(tokens.index_select(0, index), *reordered);
  auto second = model->step(tokens, *state);  // step first, then reorder
  CHECK(max_diff(first.scores.log_probs(), second.scores.log_probs().index_select(0, index)) < 1e-6);
  CHECK(max_diff(first.attention, second.attention.index_select(0, index)) < 1e-6);

  // The caches must have followed: one more identical step from both states agrees.
  state->reorder(index);
  auto next = torch::tensor({13, 14, 15, 16}, torch::kInt64);
  CHECK(max_diff(model->step(next, *reordered).scores.log_probs(), model->step(next, *state).scores.log_probs()) <
        1e-6);
}

// The self-attention caches live in buffers that reorders never copy, addressed through a
// table of rows (KeyValueCache): run past the buffers' growth chunk while hypotheses are
// expanded, reordered and dropped, and check every step against the teacher-forced pass.
TEST_CASE("Transformer cache table survives expansion, reorders, drops and growth", "[transformer]") {
  auto model = eval_model(small_config());
  torch::NoGradGuard no_grad;
  const auto source = ids({{5, 6, 7, 8, 3}, {9, 10, 3, 0, 0}, {11, 12, 13, 3, 0}});
  auto state = model->initial_state(model->encode(source));
  std::vector<int64_t> sentence = {0, 1, 2};
  std::vector<std::vector<int64_t>> history = {{2}, {2}, {2}};  // fed tokens, bos first
  auto regroup = [&](const std::vector<int64_t>& origin, bool select) {
    std::vector<int64_t> next_sentence;
    std::vector<std::vector<int64_t>> next_history;
    for (auto row : origin) next_sentence.push_back(sentence[row]), next_history.push_back(history[row]);
    sentence = next_sentence;
    history = next_history;
    const auto index = torch::tensor(origin, torch::kInt64);
    select ? state->select(index) : state->reorder(index);
  };
  torch::manual_seed(3);
  for (int64_t t = 0; t < 20; ++t) {
    std::vector<int64_t> fed;
    for (const auto& h : history) fed.push_back(h.back());
    auto out = model->step(torch::tensor(fed, torch::kInt64), *state);
    for (size_t row = 0; row < history.size(); ++row) {
      const auto src = source[sentence[row]].unsqueeze(0);
      const auto input = torch::tensor(history[row], torch::kInt64).unsqueeze(0);
      const auto expected = torch::log_softmax(model->forward(src, input).logits[0][t], -1);
      INFO("step " << t << " row " << row);
      CHECK(max_diff(out.scores.log_probs()[row], expected) < 1e-5);
    }
    if (t == 0) regroup({0, 0, 1, 1, 2, 2}, true);             // beam of 2
    if (t == 5) regroup({1, 0, 2, 2, 5, 4}, false);            // reorder, one row copied
    if (t == 9) regroup({0, 1, 4, 5}, true);                   // sentence 1 finishes
    if (t == 17) regroup({1, 1, 3, 2}, false);
    for (auto& h : history) h.push_back(4 + torch::randint(15, {1}).item<int64_t>());
  }
}

TEST_CASE("Transformer trains: gradients reach every parameter and it overfits", "[transformer]") {
  auto config = small_config("pre");
  torch::manual_seed(1);
  auto model = std::make_shared<TransformerModel>(config);
  model->train();
  auto source = ids({{4, 5, 6, 3}, {7, 8, 3, 0}, {9, 10, 11, 3}, {12, 3, 0, 0}});
  auto target = ids({{2, 6, 5, 4, 3}, {2, 8, 7, 3, 0}, {2, 11, 10, 9, 3}, {2, 12, 3, 0, 0}});
  auto input = target.narrow(1, 0, 4);
  auto output = target.narrow(1, 1, 4);
  auto loss_of = [&] {
    auto logits = model->forward(source, input).logits;
    return torch::nn::functional::cross_entropy(
        logits.reshape({-1, config.target_vocab}), output.reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(0));
  };

  // With dropout on: one backward pass must reach everything.
  loss_of().backward();
  for (const auto& parameter : model->named_parameters()) {
    INFO(parameter.key());
    CHECK(parameter.value().grad().defined());
  }
  // Also where self-attention projects two inputs at once (norm pre_query).
  auto query_only = config;
  query_only.section<TransformerConfig>().norm = "pre_query";
  model = std::make_shared<TransformerModel>(query_only);
  model->train();
  loss_of().backward();
  for (const auto& parameter : model->named_parameters()) {
    INFO("pre_query: " << parameter.key());
    CHECK(parameter.value().grad().defined());
    CHECK(parameter.value().grad().abs().sum().item<double>() > 0);
  }

  config.dropout = 0;  // new model without dropout for a clean overfit
  config.section<TransformerConfig>().attention_dropout = 0;
  model = std::make_shared<TransformerModel>(config);
  model->train();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  double loss = 0;
  for (int step = 0; step < 400; ++step) {
    optimizer.zero_grad();
    auto value = loss_of();
    value.backward();
    optimizer.step();
    loss = value.item<double>();
    if (loss < 0.02) break;
  }
  CHECK(loss < 0.05);
}

TEST_CASE("Transformer shares embeddings and the output matrix by storage", "[transformer]") {
  auto config = small_config();
  config.section<TransformerConfig>().share_embeddings = true;
  config.section<TransformerConfig>().tie_output = true;
  TransformerModel shared(config);
  auto pointer = shared.target_embedding()->weight.data_ptr();
  CHECK(shared.source_embedding()->weight.data_ptr() == pointer);
  CHECK(shared.output_weight().data_ptr() == pointer);
  int64_t copies = 0;  // registered once: the optimiser must not update it twice
  for (const auto& parameter : shared.parameters()) copies += parameter.data_ptr() == pointer;
  CHECK(copies == 1);
  CHECK(shared.named_buffers().contains("positions"));
  CHECK_FALSE(shared.named_parameters().contains("positions"));

  config.section<TransformerConfig>().share_embeddings = false;
  config.section<TransformerConfig>().tie_output = false;
  TransformerModel separate(config);
  CHECK(separate.source_embedding()->weight.data_ptr() !=
        separate.target_embedding()->weight.data_ptr());
  CHECK(separate.output_weight().data_ptr() != separate.target_embedding()->weight.data_ptr());
  CHECK(separate.named_parameters().contains("output_weight"));

  config.section<TransformerConfig>().share_embeddings = true;
  config.target_vocab = 21;
  CHECK_THROWS_AS(TransformerModel(config), nmt::Error);
}

TEST_CASE("Transformer scores at chosen positions are forward()'s rows there", "[transformer]") {
  for (std::string norm : {"pre", "post", "pre_query"}) {
    DYNAMIC_SECTION("norm " << norm) {
      auto model = eval_model(small_config(norm));
      torch::NoGradGuard no_grad;
      const auto all = model->forward(kSource(), kTarget()).logits.reshape({-1, 20});
      // Every position but the padded one (row 1, position 3), then some in another order.
      for (const auto& chosen : {std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}, std::vector<int64_t>{6, 0, 3}}) {
        const auto positions = torch::tensor(chosen, torch::kInt64);
        const auto scored = model->forward_at(kSource(), kTarget(), positions);
        REQUIRE(scored.sizes() == torch::IntArrayRef{positions.size(0), 20});
        CHECK(max_diff(scored, all.index_select(0, positions)) < 1e-5);
      }
    }
  }
}

namespace {

nmt::ModelConfig marian_like_config() {
  auto config = small_config("post");
  auto& transformer = config.section<TransformerConfig>();
  transformer.positions = "concatenated";
  transformer.decoder_start = "zeros";
  transformer.ffn_activation = "swish";
  transformer.layer_norm_epsilon = 1e-6;
  transformer.tie_output = false;  // so that <s>'s embedding row is read by the decoder only
  return config;
}

}  // namespace

TEST_CASE("Transformer with Marian's choices: positions, zero start, swish, epsilon", "[transformer]") {
  // Marian's sinusoids: every sine, then every cosine, timescales 10000^(i / (D/2 - 1)).
  const auto table = nmt::sinusoidal_positions(5, 8, nmt::PositionLayout::concatenated);
  for (int64_t p = 0; p < 5; ++p)
    for (int64_t i = 0; i < 4; ++i) {
      const double angle = static_cast<double>(p) * std::pow(10000.0, -static_cast<double>(i) / 3.0);
      CHECK(table[p][i].item<float>() == Approx(std::sin(angle)).margin(1e-5));
      CHECK(table[p][4 + i].item<float>() == Approx(std::cos(angle)).margin(1e-5));
    }
  CHECK(nmt::sinusoidal_positions(5, 8)[1][1].item<float>() == Approx(std::cos(1.0)).margin(1e-6));  // interleaved

  auto model = eval_model(marian_like_config());
  torch::NoGradGuard no_grad;
  // The first decoder input is a zero embedding: <s>'s row is never read.
  const auto before = model->forward(kSource(), kTarget()).logits;
  model->target_embedding()->weight[2].fill_(5.0);
  const auto after = model->forward(kSource(), kTarget()).logits;
  CHECK(max_diff(before.select(1, 0), after.select(1, 0)) < 1e-6);
  // Stepwise decoding equals the teacher-forced pass with these choices too.
  auto state = model->initial_state(model->encode(kSource()));
  const auto expected = torch::log_softmax(after, -1);
  for (int64_t t = 0; t < kTarget().size(1); ++t)
    CHECK(max_diff(model->step(kTarget().select(1, t), *state).scores.log_probs(), expected.select(1, t)) < 1e-5);
  for (const auto& module : model->modules())
    if (const auto* norm = module->as<torch::nn::LayerNorm>()) CHECK(norm->options.eps() == 1e-6);

  // <s>'s row is read where the decoder starts from it (our default), and swish is not relu.
  auto bos_start = marian_like_config();
  bos_start.section<TransformerConfig>().decoder_start = "bos";
  auto with_bos = eval_model(bos_start);
  const auto bos_before = with_bos->forward(kSource(), kTarget()).logits;
  with_bos->target_embedding()->weight[2].fill_(5.0);
  CHECK(max_diff(bos_before.select(1, 0), with_bos->forward(kSource(), kTarget()).logits.select(1, 0)) > 1e-3);
  auto relu = marian_like_config();
  relu.section<TransformerConfig>().ffn_activation = "relu";
  CHECK(max_diff(eval_model(relu)->forward(kSource(), kTarget()).logits, eval_model(marian_like_config())->forward(kSource(), kTarget()).logits) > 1e-4);
}

TEST_CASE("Self-attention takes its queries from one input and its keys and values from another", "[transformer]") {
  torch::manual_seed(3);
  nmt::SelfAttention attention(8, 2, 0.0);
  attention->eval();
  torch::NoGradGuard no_grad;
  const auto queries_from = torch::randn({2, 3, 8}), keys_values_from = torch::randn({2, 3, 8});
  const auto bias = nmt::causal_bias(3, torch::kFloat32);
  // By hand: the fused projection's rows are Q, K, V in turn; two heads of width 4.
  torch::Tensor qkv_weight, qkv_bias, output_weight, output_bias;
  for (const auto& parameter : attention->named_parameters()) {
    if (parameter.key() == "qkv.weight") qkv_weight = parameter.value();
    if (parameter.key() == "qkv.bias") qkv_bias = parameter.value();
    if (parameter.key() == "output.weight") output_weight = parameter.value();
    if (parameter.key() == "output.bias") output_bias = parameter.value();
  }
  REQUIRE((qkv_weight.defined() && output_weight.defined()));
  const auto project = [&](const torch::Tensor& x, int64_t part) {
    const auto projected = torch::matmul(x, qkv_weight.narrow(0, 8 * part, 8).t()) + qkv_bias.narrow(0, 8 * part, 8);
    return projected.view({2, 3, 2, 4}).transpose(1, 2);  // [B, H, T, dk]
  };
  const auto weights = torch::softmax(
      torch::matmul(project(queries_from, 0), project(keys_values_from, 1).transpose(-1, -2)) / 2.0 + bias, -1);
  const auto context = torch::matmul(weights, project(keys_values_from, 2)).transpose(1, 2).reshape({2, 3, 8});
  const auto expected = torch::matmul(context, output_weight.t()) + output_bias;
  CHECK(max_diff(attention->forward(queries_from, keys_values_from, bias).output, expected) < 1e-5);
  // One input for all three is the single-input call.
  CHECK(max_diff(attention->forward(queries_from, queries_from, bias).output, attention->forward(queries_from, bias).output) < 1e-6);
  CHECK_THROWS_WITH(attention->forward(queries_from, keys_values_from.narrow(1, 0, 2), bias),
                    HasSubstring("inputs of different shapes"));
}

TEST_CASE("Transformer with norm pre_query reads keys and values un-normalized, as Marian before 1.11", "[transformer]") {
  // The same parameters (one seed, the same modules) under the two pre-norms: only where
  // self-attention's keys and values come from differs, and that changes every output.
  torch::NoGradGuard no_grad;
  const auto pre = eval_model(small_config("pre"))->forward(kSource(), kTarget()).logits;
  const auto pre_query = eval_model(small_config("pre_query"))->forward(kSource(), kTarget()).logits;
  CHECK(max_diff(pre, pre_query) > 1e-3);
  auto ssru = small_config("pre_query");  // an SSRU reads its normalized input, as Marian's DecoderLayerRNN
  ssru.section<TransformerConfig>().decoder_autoreg = "ssru";
  auto model = eval_model(ssru);
  const auto expected = torch::log_softmax(model->forward(kSource(), kTarget()).logits, -1);
  auto state = model->initial_state(model->encode(kSource()));
  for (int64_t t = 0; t < kTarget().size(1); ++t)
    CHECK(max_diff(model->step(kTarget().select(1, t), *state).scores.log_probs(), expected.select(1, t)) < 1e-5);
  CHECK_THROWS_WITH(TransformerModel(small_config("sandwich")),
                    HasSubstring("norm must be \"pre\", \"post\" or \"pre_query\", got \"sandwich\""));
}

TEST_CASE("Transformer refuses unknown positions, decoder starts and activations by name", "[transformer]") {
  auto positions = small_config();
  positions.section<TransformerConfig>().positions = "rotary";
  CHECK_THROWS_WITH(TransformerModel(positions), HasSubstring("positions must be \"interleaved\" or \"concatenated\", got \"rotary\""));
  auto start = small_config();
  start.section<TransformerConfig>().decoder_start = "eos";
  CHECK_THROWS_WITH(TransformerModel(start), HasSubstring("decoder_start must be \"bos\" or \"zeros\""));
  auto activation = small_config();
  activation.section<TransformerConfig>().ffn_activation = "gelu";
  CHECK_THROWS_WITH(TransformerModel(activation), HasSubstring("ffn_activation must be \"relu\" or \"swish\""));
  auto odd = small_config();
  auto& transformer = odd.section<TransformerConfig>();
  transformer.positions = "concatenated";
  transformer.d_model = 30;
  transformer.heads = 3;
  CHECK_NOTHROW(TransformerModel(odd));
  transformer.d_model = 3;
  transformer.heads = 1;
  CHECK_THROWS_WITH(TransformerModel(odd), HasSubstring("even d_model of at least 4"));
}

TEST_CASE("SSRU computes Marian's recurrence and carries its cell between calls", "[transformer]") {
  torch::manual_seed(3);
  nmt::SSRU ssru(4);
  torch::NoGradGuard no_grad;
  const auto x = torch::randn({2, 3, 4});
  const auto parameters = ssru->named_parameters();
  const auto w = parameters["transform.weight"], wf = parameters["forget.weight"], bf = parameters["forget.bias"];
  CHECK_FALSE(parameters.contains("transform.bias"));  // Marian's W has no bias
  // By the formula, one position at a time from a zero cell.
  auto cell = torch::zeros({2, 4});
  std::vector<torch::Tensor> expected;
  for (int64_t t = 0; t < 3; ++t) {
    const auto xt = x.select(1, t);
    const auto f = torch::sigmoid(xt.matmul(wf.t()) + bf);
    cell = f * cell + (1 - f) * xt.matmul(w.t());
    expected.push_back(torch::relu(cell));
  }
  CHECK(max_diff(ssru->forward(x), torch::stack(expected, 1)) < 1e-6);
  // Position by position through the cell: the same outputs, and the same last cell.
  torch::Tensor carried;
  for (int64_t t = 0; t < 3; ++t)
    CHECK(max_diff(ssru->forward(x.narrow(1, t, 1), &carried).squeeze(1), expected[static_cast<size_t>(t)]) < 1e-6);
  CHECK(max_diff(carried, cell) < 1e-6);
}

namespace {

nmt::ModelConfig ssru_config() {
  auto config = marian_like_config();
  config.section<TransformerConfig>().decoder_autoreg = "ssru";
  return config;
}

}  // namespace

TEST_CASE("Transformer with an SSRU decoder: stepwise as teacher-forced, causal, reordered with the beam",
          "[transformer]") {
  auto model = eval_model(ssru_config());
  torch::NoGradGuard no_grad;
  for (const auto& parameter : model->named_parameters()) {
    INFO(parameter.key());
    CHECK(parameter.key().find("decoder.0.self_attention") == std::string::npos);
  }
  CHECK(model->named_parameters().contains("decoder.1.ssru.forget.weight"));
  CHECK(model->named_parameters().contains("decoder.1.ssru_norm.weight"));
  const auto logits = model->forward(kSource(), kTarget()).logits;
  const auto expected = torch::log_softmax(logits, -1);
  auto state = model->initial_state(model->encode(kSource()));
  for (int64_t t = 0; t < kTarget().size(1); ++t)
    CHECK(max_diff(model->step(kTarget().select(1, t), *state).scores.log_probs(), expected.select(1, t)) < 1e-5);

  // A later token changes nothing before it: the recurrence reads only the prefix.
  auto changed = kTarget();
  changed[0][2] = 17;
  const auto other = model->forward(kSource(), changed).logits;
  CHECK(max_diff(other.select(0, 0).narrow(0, 0, 2), logits.select(0, 0).narrow(0, 0, 2)) < 1e-6);
  CHECK(max_diff(other.select(0, 0).narrow(0, 2, 2), logits.select(0, 0).narrow(0, 2, 2)) > 1e-4);

  // The cells follow a beam's reorder: reorder then step equals step then reorder.
  auto beam = model->initial_state(model->encode(kSource()));
  beam->select(torch::tensor({0, 0, 1, 1}, torch::kInt64));
  model->step(torch::full({4}, 2, torch::kInt64), *beam);
  model->step(torch::tensor({5, 6, 7, 8}, torch::kInt64), *beam);
  const auto index = torch::tensor({1, 0, 3, 2}, torch::kInt64);
  const auto tokens = torch::tensor({9, 10, 11, 12}, torch::kInt64);
  auto reordered = beam->clone();
  reordered->reorder(index);
  const auto first = model->step(tokens.index_select(0, index), *reordered);
  const auto second = model->step(tokens, *beam);
  CHECK(max_diff(first.scores.log_probs(), second.scores.log_probs().index_select(0, index)) < 1e-6);
  beam->reorder(index);
  const auto next = torch::tensor({13, 14, 15, 16}, torch::kInt64);
  CHECK(max_diff(model->step(next, *reordered).scores.log_probs(), model->step(next, *beam).scores.log_probs()) < 1e-6);

  // The encoder's self-attention is exported; the decoder has none.
  const auto weights = model->self_attention(kSource(), kTarget());
  CHECK(weights.encoder.size() == 2);
  CHECK(weights.decoder.empty());
}

TEST_CASE("Transformer with an SSRU decoder trains: gradients reach every parameter", "[transformer]") {
  torch::manual_seed(1);
  auto model = std::make_shared<TransformerModel>(ssru_config());
  model->train();
  auto logits = model->forward(kSource(), kTarget()).logits;
  logits.logsumexp(-1).sum().backward();
  for (const auto& parameter : model->named_parameters()) {
    INFO(parameter.key());
    REQUIRE(parameter.value().grad().defined());
    CHECK(parameter.value().grad().abs().sum().item<double>() > 0);
  }
  auto unknown = ssru_config();
  unknown.section<TransformerConfig>().decoder_autoreg = "average_attention";
  CHECK_THROWS_WITH(TransformerModel(unknown), HasSubstring("decoder_autoreg must be \"self_attention\" or \"ssru\""));
}
