#pragma once
// The full check of a training config: the ranges (Config::validate), the model family
// and its own section (models/registry.h), and train.metric against the metric registry.
#include "nmt/base/config.h"

namespace nmt {

/// Throws nmt::Error naming the first bad field.
void check_config(const Config& config);

}  // namespace nmt
