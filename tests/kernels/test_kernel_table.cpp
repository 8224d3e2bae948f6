// The kernel table is what the kernel files register beside their dispatch families: every
// family of lib/kernels/ (NMT_ISA_VERSIONS) is in an entry, every entry is loaded, and each
// says which version runs: the one the CPU and NMT_CPU_ISA allow (CI runs this again under
// NMT_CPU_ISA=avx2 and NMT_CPU_ISA=baseline).
#include "support/catch.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "nmt/base/cpu_features.h"
#include "nmt/kernels/kernel_table.h"
#include "support/test_util.h"

TEST_CASE("the kernel table holds every dispatch family of lib/kernels/, each operation once", "[kernels][isa]") {
  // The families and the entries, as the kernel files declare them.
  std::set<std::string> families, in_entries;
  int entries = 0;
  const std::regex family(R"(NMT_ISA_VERSIONS(?:_TO_AVX2)?\((\w+),)");
  const std::regex entry(R"(NMT_KERNEL_TABLE_ENTRY\(([^;]*?)\)\n)");
  const std::regex widest(R"((\w+)_widest)");
  for (const auto& file : std::filesystem::directory_iterator(nmt::test::source_path("lib/kernels"))) {
    if (file.path().extension() != ".cpp") continue;
    std::stringstream text;
    text << std::ifstream(file.path()).rdbuf();
    const auto source = text.str();
    for (std::sregex_iterator it(source.begin(), source.end(), family), end; it != end; ++it) families.insert((*it)[1]);
    for (std::sregex_iterator it(source.begin(), source.end(), entry), end; it != end; ++it) {
      ++entries;
      const std::string arguments = (*it)[1];
      for (std::sregex_iterator w(arguments.begin(), arguments.end(), widest); w != end; ++w) in_entries.insert((*w)[1]);
    }
  }
  REQUIRE_FALSE(families.empty());
  for (const auto& name : families) {
    INFO("family " << name << " is in no NMT_KERNEL_TABLE_ENTRY");
    CHECK(in_entries.count(name) == 1);
  }
  // Every entry was registered at load, under a name of its own, with a fallback.
  std::set<std::string> named;
  for (const auto& registered : nmt::kernel_table()) {
    CHECK(named.insert(registered.operation).second);
    CHECK_FALSE(registered.fallback.empty());
  }
  CHECK(static_cast<int>(named.size()) == entries);
  CHECK(named.count("attention products") == 1);
  CHECK(nmt::describe_kernel_table().size() == named.size());
}

TEST_CASE("the kernel table reports the version NMT_CPU_ISA allows", "[kernels][isa]") {
  INFO("CPU: " << nmt::describe_cpu_features());
  const char* cap = std::getenv("NMT_CPU_ISA");
  const std::string capped = cap != nullptr ? cap : "";
  for (const auto& entry : nmt::kernel_table()) {
    CAPTURE(entry.operation);
    CHECK(entry.runs <= entry.widest);
    CHECK(entry.runs <= nmt::isa_level());
    CHECK(entry.runs == nmt::dispatch_level(entry.widest));  // what choose_version picks
#if defined(__x86_64__) && defined(__GNUC__)
    if (capped == "avx2" && nmt::cpu_features().avx2) CHECK(nmt::isa_level_name(entry.runs) == "avx2");
    if (capped == "baseline") CHECK(nmt::isa_level_name(entry.runs) == "baseline");
    if (capped.empty() && nmt::cpu_features().avx512 && entry.operation != "single-query attention")
      CHECK(nmt::isa_level_name(entry.runs) == "avx512");
#endif
  }
}
