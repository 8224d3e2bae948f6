#pragma once
#include "nmt/base/config.h"
#include "nmt/models/model.h"

namespace nmt {

/// Builds the model family named by config.arch with freshly initialised weights.
ModelPtr build_model(const ModelConfig& config);

}  // namespace nmt
