#pragma once
// The device the model, decoding and training tests run on: the CPU, or CUDA when the
// environment sets NMT_TEST_DEVICE=cuda (a GPU machine runs the same tests there). A test
// that needs CUDA and finds none reports "skipped: no CUDA" with its name and checks
// nothing more, so a run on a CPU machine passes and says what it left out.
#include "support/catch.h"
#include <torch/cuda.h>
#include <torch/types.h>

#include <cstdlib>
#include <string>

#include "nmt/base/error.h"

namespace nmt::test {

/// NMT_TEST_DEVICE: unset, empty or "cpu" the CPU; "cuda" CUDA. Anything else is an error,
/// so a typo cannot run the whole suite on the CPU unnoticed.
inline bool cuda_requested() {
  const char* value = std::getenv("NMT_TEST_DEVICE");
  const std::string name = value != nullptr ? value : "";
  if (name.empty() || name == "cpu") return false;
  if (name == "cuda") return true;
  throw Error("NMT_TEST_DEVICE must be cpu or cuda, got \"" + name + "\"");
}

/// Reports the running test as skipped for want of CUDA: Catch2 3's SKIP where it has it
/// (3.3 and later), a warning naming the test under Catch2 2.
#if NMT_CATCH2_MAJOR >= 3 && defined(SKIP)
#define NMT_SKIP_NO_CUDA() SKIP("skipped: no CUDA: " << Catch::getResultCapture().getCurrentTestName())
#else
#define NMT_SKIP_NO_CUDA() WARN("skipped: no CUDA: " << Catch::getResultCapture().getCurrentTestName())
#endif

/// The tests' device: CUDA when NMT_TEST_DEVICE=cuda, else the CPU. Only call it after
/// NMT_TEST_DEVICE_OR_SKIP (or where cuda_requested() was checked against has_cuda()).
inline torch::Device test_device() { return cuda_requested() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU); }

inline bool has_cuda() { return torch::cuda::is_available(); }

}  // namespace nmt::test

/// Declares `const torch::Device name`, the test's device (test_device()); where CUDA was
/// asked for and none is here, reports the test skipped and returns from it.
#define NMT_TEST_DEVICE_OR_SKIP(name)                                \
  if (::nmt::test::cuda_requested() && !::nmt::test::has_cuda()) { \
    NMT_SKIP_NO_CUDA();                                              \
    return;                                                          \
  }                                                                  \
  const torch::Device name = ::nmt::test::test_device()

/// For a test that runs on CUDA only: reports it skipped and returns where there is no GPU.
#define NMT_REQUIRE_CUDA_OR_SKIP() \
  if (!::nmt::test::has_cuda()) {  \
    NMT_SKIP_NO_CUDA();            \
    return;                        \
  }
