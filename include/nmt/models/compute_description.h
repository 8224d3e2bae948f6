#pragma once
// What computes a set-up model, in one place: the decisions fixed when it was built,
// loaded, converted or put into a training mode, as --verbose prints them.
#include <string>
#include <vector>

#include "nmt/models/model.h"

namespace nmt {

/// One line per decision: the model's device (its parameters'), its Linear path, each kind
/// of layer and what computes it, the instruction set (cpu_features(), so NMT_CPU_ISA counts), the version of each of
/// the project's own kernels and its fallback (kernels/kernel_table.h; on CUDA, that
/// LibTorch's own operations compute each of them), the oneDNN LibTorch
/// loaded, and LibTorch's intra-op threads.
std::vector<std::string> describe_compute(const Seq2SeqModel& model);

}  // namespace nmt
