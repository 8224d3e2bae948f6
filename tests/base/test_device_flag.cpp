// --device: the names every tool takes, and the errors for the rest. A GPU index is checked
// for its form before CUDA is asked, so these run on any machine.
#include "support/catch.h"
#include <torch/cuda.h>

#include "nmt/base/device.h"
#include "nmt/base/error.h"

TEST_CASE("the device flag takes cpu and cuda and cuda:N and names what is wrong with anything else", "[device]") {
  CHECK(nmt::parse_device("cpu").is_cpu());
  CHECK_THROWS_WITH(nmt::parse_device("gpu"), HasSubstring("expected cpu, cuda or cuda:N"));
  CHECK_THROWS_WITH(nmt::parse_device("cudax"), HasSubstring("expected cpu, cuda or cuda:N"));
  for (const char* malformed : {"cuda:", "cuda:-1", "cuda:one", "cuda:1x", "cuda:99999"})
    CHECK_THROWS_WITH(nmt::parse_device(malformed), HasSubstring("N a GPU's index"));
  if (!torch::cuda::is_available()) {
    CHECK_THROWS_WITH(nmt::parse_device("cuda"), HasSubstring("no CUDA support or no GPU is visible"));
    CHECK_THROWS_WITH(nmt::parse_device("cuda:0"), HasSubstring("no CUDA support or no GPU is visible"));
  } else {
    CHECK(nmt::parse_device("cuda:0") == c10::Device(c10::kCUDA, 0));
    const auto past = std::to_string(torch::cuda::device_count());
    CHECK_THROWS_WITH(nmt::parse_device("cuda:" + past), HasSubstring("there is no GPU " + past));
  }
}
