#include "nmt/training/config_check.h"

#include "nmt/base/error.h"
#include "nmt/eval/metric.h"
#include "nmt/models/registry.h"

namespace nmt {

void check_config(const Config& config) {
  config.validate();
  validate_model_config(config.model);
  if (config.train.metric == "loss") return;
  try {
    find_metric(config.train.metric);
  } catch (const Error&) {
    throw Error("invalid config: train.metric must be loss or a metric (" + metric_list() + "), not \"" +
                config.train.metric + "\"");
  }
}

}  // namespace nmt
