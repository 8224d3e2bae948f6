#pragma once
#include "nmt/config.h"
#include "nmt/model.h"

namespace nmt {

/// Builds the model family named by config.arch with freshly initialised weights.
ModelPtr build_model(const ModelConfig& config);

}  // namespace nmt
