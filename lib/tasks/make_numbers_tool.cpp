// nmt-make-numbers's command line (apps/nmt-make-numbers.cpp calls run): writes the bundled English->German number-words task as
// DIR/{train,valid,test}.{en,de}, one sentence per line, line-aligned.
#include "nmt/tasks/make_numbers_tool.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "nmt/base/process_setup.h"
#include "nmt/base/cli.h"
#include "nmt/base/error.h"
#include "nmt/tasks/number_words.h"

namespace nmt::tools::make_numbers_tool {
namespace {

namespace fs = std::filesystem;

// Write to a temporary and rename, so an interrupted run never leaves a
// truncated file that a later training run would silently accept.
void write_side(const fs::path& path, const std::vector<nmt::NumberPair>& pairs, bool german) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw nmt::Error("cannot open " + tmp.string() + " for writing");
    for (const auto& p : pairs) out << (german ? p.german : p.english) << '\n';
    out.flush();
    if (!out) throw nmt::Error("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw nmt::Error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
}

}  // namespace

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  CLI::App app{"Generate the bundled English->German number-words task"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);

  std::string dir;
  unsigned long seed = 1;
  std::size_t train = 20000, valid = 500, test = 500;
  int max_digits = 6;
  app.add_option("--output-dir", dir, "Directory for {train,valid,test}.{en,de}")->required();
  app.add_option("--seed", seed, "Random seed (same seed, same files on every platform)")
      ->capture_default_str();
  app.add_option("--train", train, "Training pairs")->capture_default_str();
  app.add_option("--valid", valid, "Validation pairs")->capture_default_str();
  app.add_option("--test", test, "Test pairs")->capture_default_str();
  app.add_option("--max-digits", max_digits, "Largest number of digits")
      ->check(nmt::cli::in_range(1, 9))
      ->capture_default_str();

  return nmt::cli::run(app, common, argc, argv, [&] {
    const auto splits = nmt::generate_number_splits(seed, train, valid, test, max_digits);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw nmt::Error("cannot create " + dir + ": " + ec.message());
    const std::pair<const char*, const std::vector<nmt::NumberPair>*> parts[] = {
        {"train", &splits.train}, {"valid", &splits.valid}, {"test", &splits.test}};
    for (const auto& [name, pairs] : parts) {
      write_side(fs::path(dir) / (std::string(name) + ".en"), *pairs, false);
      write_side(fs::path(dir) / (std::string(name) + ".de"), *pairs, true);
    }
    std::fprintf(stderr, "nmt-make-numbers: wrote %zu/%zu/%zu train/valid/test pairs to %s\n",
                 train, valid, test, dir.c_str());
    return 0;
  });
}

}  // namespace nmt::tools::make_numbers_tool
