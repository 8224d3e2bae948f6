#include "nmt/models/compute_description.h"

#include <ATen/Parallel.h>

#include "nmt/base/cpu_features.h"
#include "nmt/base/device.h"
#include "nmt/base/library_versions.h"
#include "nmt/kernels/kernel_table.h"

namespace nmt {

std::vector<std::string> describe_compute(const Seq2SeqModel& model) {
  const auto device = model.device();
  std::vector<std::string> lines{"device: " + describe_device(device), "linear path: " + linear_path_name(model.linear_path())};
  for (const auto& kind : model.layer_computations()) lines.push_back(kind.layers + ": " + kind.computation);
  lines.push_back("instruction set: " + describe_cpu_features());
  for (const auto& kernel : describe_kernel_table(device)) lines.push_back("kernel " + kernel);
  lines.push_back("libraries: " + library_versions());
  lines.push_back("threads: " + std::to_string(at::get_num_threads()) + " (LibTorch intra-op)");
  return lines;
}

}  // namespace nmt
