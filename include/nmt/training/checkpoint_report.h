#pragma once
// What a checkpoint file says about itself, for nmt-info: the model (models/model_summary.h),
// how it was trained (the config's "train" section, the step), the training state a
// last.pt carries (epoch, best score, time trained), and, when the run's train.jsonl lies
// beside the file, the validation of the weights it holds and the run's best one.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace nmt {

/// The report as JSON: {"file", "bytes", "sealed", "step" (null if not recorded), "model",
/// "training_config", "training_state" (null unless the file can resume a run), "log"
/// (null without a train.jsonl beside the file)}. Throws nmt::Error naming the file when it
/// is not a readable checkpoint.
nlohmann::json checkpoint_report(const std::string& path);

/// The same report as lines for a terminal ("  label   value").
std::vector<std::string> report_lines(const nlohmann::json& report);

}  // namespace nmt
