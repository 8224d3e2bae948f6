#include "nmt/kernels/kernel_table.h"

#include <algorithm>

namespace nmt {
namespace {

struct Operation {
  std::string name;
  IsaLevel widest;
  std::string fallback;
};

// Filled at load by the kernel files' registrations (static objects), read after main starts.
std::vector<Operation>& registered_operations() {
  static std::vector<Operation> operations;
  return operations;
}

}  // namespace

KernelRegistration::KernelRegistration(const char* operation, const char* fallback,
                                       std::initializer_list<IsaLevel> families) {
  auto& operations = registered_operations();
  operations.push_back({operation, std::min(families), fallback});
  std::sort(operations.begin(), operations.end(),
            [](const Operation& a, const Operation& b) { return a.name < b.name; });
}

std::string isa_level_name(IsaLevel level) {
  switch (level) {
    case IsaLevel::avx512: return "avx512";
    case IsaLevel::avx2: return "avx2";
    case IsaLevel::baseline: break;
  }
  return "baseline";
}

std::vector<KernelEntry> kernel_table() {
  std::vector<KernelEntry> table;
  for (const auto& operation : registered_operations())
    table.push_back({operation.name, operation.widest, dispatch_level(operation.widest), operation.fallback});
  return table;
}

std::vector<std::string> describe_kernel_table() {
  std::vector<std::string> lines;
  for (const auto& entry : kernel_table())
    lines.push_back(entry.operation + ": " + isa_level_name(entry.runs) + " (else " + entry.fallback + ")");
  return lines;
}

std::vector<std::string> describe_kernel_table(const c10::Device& device) {
  if (device.is_cpu()) return describe_kernel_table();
  std::vector<std::string> lines;
  for (const auto& operation : registered_operations())
    lines.push_back(operation.name + ": not on " + device.str() +
                    ", LibTorch's own operations there (the kernel reads CPU memory)");
  return lines;
}

}  // namespace nmt
