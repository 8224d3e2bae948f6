#include "nmt/models/model_summary.h"

#include <torch/torch.h>

namespace nmt {

nlohmann::json model_summary(const LoadedModel& model) {
  int64_t parameters = 0;
  for (const auto& p : model.model->parameters()) parameters += p.numel();
  return {{"family", model.config.model.arch},
          {"parameters", parameters},
          {"source_vocab", model.source_tokenizer.vocab_size()},
          {"target_vocab", model.target_tokenizer.vocab_size()},
          {"shared_vocab", model.source_tokenizer.serialized() == model.target_tokenizer.serialized()},
          {"has_attention", model.model->has_attention()},
          {"attention_layers", model.model->attention_layers()},
          {"max_positions", model.model->max_positions()},
          {"config", config_to_json(model.config)["model"]}};
}

}  // namespace nmt
