// gru_cell_step (nmt/models/rnn/gru_cell_step.h) is the GRUCell: on fp32_torch it is the
// module itself; on fp32_onednn (inference) and bf16_mixed (mixed-precision training) its
// own gate arithmetic must give the module's result and, in training, the module's gradients.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/models/rnn/gru_cell_step.h"
#include "support/precision_here.h"

using namespace nmt;

TEST_CASE("gru_cell_step equals the GRUCell module", "[rnn][onednn]") {
  torch::manual_seed(5);
  torch::nn::GRUCell cell(12, 20);
  for (const int64_t rows : {1, 3, 40}) {
    const auto x = torch::randn({rows, 12});
    const auto h = torch::randn({rows, 20});
    const auto trained = gru_cell_step(cell, LinearPath::fp32_torch, x, h);
    CHECK(trained.requires_grad());  // the module, differentiable
    torch::NoGradGuard no_grad;
    const auto expected = cell(x, h);
    INFO("rows " << rows);
    const auto inference = inference_path(Precision::fp32, torch::kCPU);  // oneDNN where it was found
    CHECK(torch::allclose(gru_cell_step(cell, inference, x, h), expected, 1e-5, 1e-6));
    CHECK(torch::equal(trained.detach(), expected));
  }
}

namespace {

struct CellGradients {
  torch::Tensor output;
  std::vector<torch::Tensor> gradients;  // x, h, then the cell's parameters
};

CellGradients backward_through(torch::nn::GRUCell& cell, const torch::Tensor& x, const torch::Tensor& h,
                               bool bf16) {
  cell->zero_grad();
  const auto x_leaf = x.clone().requires_grad_(true);
  const auto h_leaf = h.clone().requires_grad_(true);
  const auto output = gru_cell_step(cell, bf16 ? LinearPath::bf16_mixed : LinearPath::fp32_torch, x_leaf, h_leaf);
  output.pow(2).sum().backward();
  CellGradients result{output.detach(), {x_leaf.grad(), h_leaf.grad()}};
  for (const auto& parameter : cell->parameters()) result.gradients.push_back(parameter.grad().clone());
  return result;
}

}  // namespace

TEST_CASE("gru_cell_step in mixed-precision training differentiates like the module", "[rnn][precision]") {
  if (!test::runs_here(Precision::bf16)) return;
  torch::manual_seed(6);
  torch::nn::GRUCell cell(12, 20);
  const auto x = torch::randn({7, 12});
  const auto h = torch::randn({7, 20});
  const auto module = backward_through(cell, x, h, /*bf16=*/false);
  const auto mixed = backward_through(cell, x, h, /*bf16=*/true);
  CHECK(mixed.output.scalar_type() == torch::kFloat);
  CHECK_FALSE(mixed.output.equal(module.output));  // the products did run in bf16
  CHECK(torch::allclose(mixed.output, module.output, 0.0, 0.05));
  REQUIRE(mixed.gradients.size() == 6);
  for (size_t i = 0; i < mixed.gradients.size(); ++i) {
    const auto& g = mixed.gradients[i];
    const auto& r = module.gradients[i];
    INFO("gradient " << i);
    CHECK(g.scalar_type() == torch::kFloat);  // fp32 master weights get fp32 gradients
    CHECK(((g - r).norm() / r.norm()).item<double>() < 0.03);
  }
}
