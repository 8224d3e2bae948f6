// The vectorised row reductions: the exp within Cephes' accuracy, and every version
// (kernels/isa_versions.h; CI runs the tests as found and with NMT_CPU_ISA=avx2 and
// NMT_CPU_ISA=baseline) giving the very sums a plain loop in the same order gives, so
// results never depend on the CPU; and the version that runs is the one the CPU and
// NMT_CPU_ISA allow.
#include "support/catch.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "nmt/base/cpu_features.h"
#include "nmt/kernels/isa_versions.h"
#include "nmt/kernels/vector_math.h"

namespace {

constexpr int kLanes = 16;  // vector_math.cpp's partial sums, added in this order

float plain_sum_exp(const std::vector<float>& z, float shift) {
  float lane[kLanes] = {};
  size_t j = 0;
  for (; j + kLanes <= z.size(); j += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] += nmt::exp_approx(z[j + k] - shift);
  float total = 0;
  for (; j < z.size(); ++j) total += nmt::exp_approx(z[j] - shift);
  for (float x : lane) total += x;
  return total;
}

int version_avx512() { return 512; }
int version_avx2() { return 2; }
int version_baseline() { return 0; }

inline __attribute__((always_inline)) int twice(int x) { return 2 * x; }
NMT_ISA_VERSIONS(twice_versions, twice)

}  // namespace

TEST_CASE("exp_approx is within a few ulp of std::exp", "[kernels][vector_math]") {
  for (float x = -86.99f; x < 88.0f; x += 0.0137f) {
    const double exact = std::exp(static_cast<double>(x));
    INFO("x = " << x);
    CHECK(std::abs(nmt::exp_approx(x) - exact) <= 4e-7 * exact);
  }
  CHECK(nmt::exp_approx(-87.5f) == 0.0f);  // flushed, never a denormal
  CHECK(nmt::exp_approx(-1e30f) == 0.0f);
  CHECK(nmt::exp_approx(-INFINITY) == 0.0f);
}

TEST_CASE("row sums are the same numbers on every instruction set", "[kernels][vector_math]") {
  std::mt19937 generator(11);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (const size_t n : {1, 15, 16, 37, 8000}) {
    std::vector<float> z(n);
    for (auto& x : z) x = normal(generator);
    const auto sums = nmt::max_and_sum(z.data(), static_cast<int64_t>(n));
    float max = -INFINITY;
    for (float x : z) max = std::max(max, x);
    CHECK(sums.max == max);
    const float summed = nmt::sum_exp(z.data(), static_cast<int64_t>(n), sums.max);
    CHECK(summed == plain_sum_exp(z, sums.max));  // bit for bit: no version reassociates or fuses
    auto in_place = z;
    CHECK(nmt::exp_in_place(in_place.data(), static_cast<int64_t>(n), sums.max) == summed);
    for (size_t j = 0; j < n; ++j) CHECK(in_place[j] == nmt::exp_approx(z[j] - sums.max));
  }
}

TEST_CASE("the project's own loops run the version the CPU and NMT_CPU_ISA allow", "[kernels][isa]") {
  using nmt::IsaLevel;
  const auto& f = nmt::cpu_features();
  INFO("CPU: " << nmt::describe_cpu_features());
  const auto level = nmt::isa_level();
  const char* cap = std::getenv("NMT_CPU_ISA");
  if (cap != nullptr && std::string(cap) == "avx2") CHECK(level != IsaLevel::avx512);
  if (cap != nullptr && std::string(cap) == "baseline") CHECK(level == IsaLevel::baseline);
  CHECK(level == (f.avx512 ? IsaLevel::avx512 : f.avx2 ? IsaLevel::avx2 : IsaLevel::baseline));
  const int expected = level == IsaLevel::avx512 ? 512 : level == IsaLevel::avx2 ? 2 : 0;
  CHECK(nmt::choose_version(&version_avx512, &version_avx2, &version_baseline)() == expected);
  using Version = int (*)();  // a loop compiled up to AVX2 only: AVX-512 CPUs take that
  CHECK(nmt::choose_version<Version>(nullptr, &version_avx2, &version_baseline)() ==
        (level == IsaLevel::baseline ? 0 : 2));
  CHECK(twice_versions(21) == 42);
}
