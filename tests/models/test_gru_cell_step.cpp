// gru_cell_step (nmt/models/rnn/gru_cell_step.h) is the GRUCell: with grad mode it is the
// module itself; without, its own gate arithmetic must give the module's result.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "nmt/models/rnn/gru_cell_step.h"

using namespace nmt;

TEST_CASE("gru_cell_step equals the GRUCell module", "[rnn][onednn]") {
  torch::manual_seed(5);
  torch::nn::GRUCell cell(12, 20);
  for (const int64_t rows : {1, 3, 40}) {
    const auto x = torch::randn({rows, 12});
    const auto h = torch::randn({rows, 20});
    const auto trained = gru_cell_step(cell, x, h);
    CHECK(trained.requires_grad());  // grad mode: the module, differentiable
    torch::NoGradGuard no_grad;
    const auto expected = cell(x, h);
    INFO("rows " << rows);
    CHECK(torch::allclose(gru_cell_step(cell, x, h), expected, 1e-5, 1e-6));
    CHECK(torch::equal(trained.detach(), expected));
  }
}
