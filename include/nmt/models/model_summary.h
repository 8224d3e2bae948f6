#pragma once
// What a model is, as JSON: its family, size, tokenizers and architecture. One definition
// for every place that describes a model (nmt-serve's /v1/model, nmt-info).
#include <nlohmann/json.hpp>

#include "nmt/models/checkpoint.h"

namespace nmt {

/// {"family", "parameters", "source_vocab", "target_vocab", "shared_vocab", "has_attention",
///  "attention_layers", "max_positions", "config": the config's "model" section}.
nlohmann::json model_summary(const LoadedModel& model);

}  // namespace nmt
