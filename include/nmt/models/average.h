#pragma once
// Checkpoint averaging (Vaswani et al. 2017; Junczys-Dowmunt et al. 2016): the mean of
// the weights of several checkpoints of one run is usually a better model than any of
// them. Used by nmt-average and by train.average_last.
#include <string>
#include <vector>

#include "nmt/models/checkpoint.h"

namespace nmt {

/// Loads every checkpoint and returns one whose weights are the element-wise mean
/// (accumulated in float64), with the config, tokenizers and step of the last one.
/// Throws nmt::Error naming the file when a model config or a tokenizer differs from the
/// first file's, or when fewer than one path is given.
LoadedModel average_checkpoints(const std::vector<std::string>& paths);

/// average_checkpoints, then writes the result as a model file (no training state).
void write_average(const std::vector<std::string>& paths, const std::string& output);

}  // namespace nmt
