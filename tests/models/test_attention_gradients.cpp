// Training's attention (the projections split into heads by a custom function, the batched
// products of attention_products.h, heads merged by a view) must give the gradients of
// the textbook formula written in plain LibTorch operations, for every parameter and the
// inputs, with padding masked, for heads of 64 and of 16.
#include "support/catch.h"

#include <torch/torch.h>

#include <cmath>
#include <map>
#include <string>

#include "nmt/models/transformer/multi_head_attention.h"
#include "support/tensor_diff.h"

using nmt::test::max_diff;

namespace {

using Parameters = std::map<std::string, torch::Tensor>;

// Copies of the module's parameters (leaves of their own graph) for the reference.
Parameters copies(torch::nn::Module& module) {
  Parameters out;
  for (const auto& p : module.named_parameters()) out[p.key()] = p.value().detach().clone().requires_grad_();
  return out;
}

// softmax(q k^T / sqrt(dk) + bias) v through torch::matmul, heads merged, projected out.
torch::Tensor reference_attention(const torch::Tensor& q_projected, const torch::Tensor& k_projected,
                                  const torch::Tensor& v_projected, const torch::Tensor& bias, int64_t heads,
                                  const Parameters& p) {
  const int64_t batch = q_projected.size(0), length = q_projected.size(1), d_model = q_projected.size(2);
  const int64_t dk = d_model / heads;
  auto split = [&](const torch::Tensor& t) { return t.view({t.size(0), t.size(1), heads, dk}).transpose(1, 2); };
  const auto scores = torch::matmul(split(q_projected), split(k_projected).transpose(-2, -1)) / std::sqrt(double(dk));
  const auto weights = torch::softmax(scores + bias, -1);
  const auto context = torch::matmul(weights, split(v_projected)).transpose(1, 2).reshape({batch, length, d_model});
  return torch::linear(context, p.at("output.weight"), p.at("output.bias"));
}

// The attention bias for `batch` sentences of `length` positions, the last `padded` of
// sentence `row` padding.
torch::Tensor bias_with_padding(int64_t batch, int64_t length, int64_t row, int64_t padded) {
  auto mask = torch::ones({batch, length}, torch::kBool);
  mask[row].narrow(0, length - padded, padded).fill_(false);
  return nmt::padding_bias(mask, torch::kFloat);
}

void check_gradients(torch::nn::Module& module, const Parameters& reference) {
  for (const auto& p : module.named_parameters()) {
    CAPTURE(p.key());
    REQUIRE(p.value().grad().defined());
    CHECK(max_diff(p.value().grad(), reference.at(p.key()).grad()) < 1e-4);
  }
}

}  // namespace

TEST_CASE("self-attention's gradients equal the formula's in plain LibTorch", "[transformer][attention]") {
  const auto width = GENERATE(std::make_pair<int64_t, int64_t>(256, 4), std::make_pair<int64_t, int64_t>(64, 4));
  const int64_t d_model = width.first, heads = width.second, batch = 3, length = 7;
  CAPTURE(d_model, heads);
  torch::manual_seed(3);
  nmt::SelfAttention attention(d_model, heads, 0.0);
  const auto bias = bias_with_padding(batch, length, 1, 3);
  const auto x = torch::randn({batch, length, d_model}).requires_grad_();
  const auto x_reference = x.detach().clone().requires_grad_();
  const auto loss_weights = torch::randn({batch, length, d_model});

  const auto output = attention->forward(x, bias).output;
  (output * loss_weights).sum().backward();

  auto p = copies(*attention);
  const auto qkv = torch::linear(x_reference, p.at("qkv.weight"), p.at("qkv.bias")).chunk(3, -1);
  const auto expected = reference_attention(qkv[0], qkv[1], qkv[2], bias, heads, p);
  (expected * loss_weights).sum().backward();

  CHECK(max_diff(output, expected) < 1e-5);
  CHECK(max_diff(x.grad(), x_reference.grad()) < 1e-4);
  check_gradients(*attention, p);
}

TEST_CASE("cross-attention's gradients equal the formula's in plain LibTorch", "[transformer][attention]") {
  const int64_t d_model = 64, heads = 2, batch = 2, target_length = 5, source_length = 9;
  torch::manual_seed(4);
  nmt::CrossAttention attention(d_model, heads, 0.0);
  const auto bias = bias_with_padding(batch, source_length, 0, 3);
  const auto x = torch::randn({batch, target_length, d_model}).requires_grad_();
  const auto memory = torch::randn({batch, source_length, d_model}).requires_grad_();
  const auto x_reference = x.detach().clone().requires_grad_();
  const auto memory_reference = memory.detach().clone().requires_grad_();
  const auto loss_weights = torch::randn({batch, target_length, d_model});

  const auto output = attention->forward(x, attention->project_memory(memory), bias).output;
  (output * loss_weights).sum().backward();

  auto p = copies(*attention);
  const auto query = torch::linear(x_reference, p.at("query.weight"), p.at("query.bias"));
  const auto key_value = torch::linear(memory_reference, p.at("key_value.weight"), p.at("key_value.bias")).chunk(2, -1);
  const auto expected = reference_attention(query, key_value[0], key_value[1], bias, heads, p);
  (expected * loss_weights).sum().backward();

  CHECK(max_diff(output, expected) < 1e-5);
  CHECK(max_diff(x.grad(), x_reference.grad()) < 1e-4);
  CHECK(max_diff(memory.grad(), memory_reference.grad()) < 1e-4);
  check_gradients(*attention, p);
}
