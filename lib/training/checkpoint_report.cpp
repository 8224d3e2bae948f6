#include "nmt/training/checkpoint_report.h"

#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "nmt/models/checkpoint.h"
#include "nmt/models/model_summary.h"
#include "nmt/models/registry.h"

namespace nmt {
namespace {

// The progress a last.pt stores by name (run_setup.cpp writes it), each as a number.
// Files written before it was stored by name hold it by position: reported as absent.
nlohmann::json training_state(torch::serialize::InputArchive& archive) {
  torch::serialize::InputArchive state, fields;
  if (!archive.try_read("training", state)) return nullptr;
  nlohmann::json progress = nlohmann::json::object();
  if (!state.try_read("progress_fields", fields)) return progress;
  for (const auto& name : fields.keys()) {
    torch::Tensor value;
    if (!fields.try_read(name, value) || value.numel() != 1) continue;
    if (value.is_floating_point()) progress[name] = value.item<double>();
    else progress[name] = value.item<int64_t>();
  }
  return progress;
}

// The run's log beside the file: the validation of the step the file holds, and the one the
// run marked best last. Lines that are not JSON (a log cut by a kill) are skipped.
nlohmann::json log_beside(const std::string& path, int64_t step) {
  const auto log_path = (std::filesystem::path(path).parent_path() / "train.jsonl").string();
  std::ifstream in(log_path);
  if (!in) return nullptr;
  nlohmann::json at_step, best;
  int64_t validations = 0;
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object() || record.value("type", "") != "validation") continue;
    ++validations;
    const auto record_step = record.value("step", int64_t{-1});
    if (step >= 0 && record_step == step) at_step = record;
    if (record.value("best", false)) best = record;
  }
  return {{"path", log_path}, {"validations", validations}, {"at_step", at_step}, {"best", best}};
}

std::string with_thousands(int64_t n) {
  auto digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > (n < 0 ? 1 : 0); i -= 3) digits.insert(i, ",");
  return digits;
}

std::string number(const nlohmann::json& value) {
  if (value.is_number_float()) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value.get<double>());
    return text;
  }
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// "d_model 256, heads 4, transformer.norm post": scalars of a section, nested ones dotted.
void flatten(const nlohmann::json& section, const std::string& prefix, std::string& out) {
  for (const auto& [key, value] : section.items()) {
    if (value.is_object()) {
      flatten(value, prefix + key + ".", out);
      continue;
    }
    if (!out.empty()) out += ", ";
    out += prefix + key + " " + number(value);
  }
}

std::string validation_text(const nlohmann::json& record) {
  std::string text = "at step " + number(record["step"]) + ":";
  const char* separator = " ";
  for (const auto& [key, value] : record.items()) {
    if (key == "type" || key == "step" || key == "best" || key == "sentences" || !value.is_number()) continue;
    text += separator + key + " " + number(value);
    separator = ", ";
  }
  if (record.contains("sentences")) text += " (" + number(record["sentences"]) + " sentences)";
  return text;
}

void add(std::vector<std::string>& lines, const std::string& label, const std::string& value) {
  char padded[16];
  std::snprintf(padded, sizeof padded, "%-13s", label.c_str());
  lines.push_back(padded + value);
}

}  // namespace

nlohmann::json checkpoint_report(const std::string& path) {
  bool sealed = true;
  auto archive = read_checkpoint_archive(path, &sealed);
  const auto model = load_model(archive, path);
  const int64_t step = model.step;
  return {{"file", path},
          {"bytes", static_cast<int64_t>(std::filesystem::file_size(path))},
          {"sealed", sealed},
          {"step", step >= 0 ? nlohmann::json(step) : nlohmann::json(nullptr)},
          {"model", model_summary(model)},
          {"training_config", config_to_json(model.config)["train"]},
          {"training_state", training_state(archive)},
          {"log", log_beside(path, step)}};
}

std::vector<std::string> report_lines(const nlohmann::json& report) {
  std::vector<std::string> lines;
  char size[32];
  std::snprintf(size, sizeof size, "%.1f MB", report["bytes"].get<double>() / 1e6);
  add(lines, "file", report["file"].get<std::string>() + " (" + size +
                         (report["sealed"].get<bool>() ? ", sealed with a checksum)" : ", no checksum: an older file)"));
  const auto& model = report["model"];
  add(lines, "family", model["family"].get<std::string>() + ", " +
                           with_thousands(model["parameters"].get<int64_t>()) + " parameters");
  // The family's own section only: the config keeps the other families' defaults too.
  const auto& section = find_model_family(model["family"].get<std::string>()).settings_section;
  std::string architecture;
  for (const auto& [key, value] : model["config"].items()) {
    if (key == "arch" || (value.is_object() && key != section)) continue;
    flatten(value.is_object() ? value : nlohmann::json{{key, value}}, value.is_object() ? key + "." : "", architecture);
  }
  add(lines, "architecture", architecture);
  add(lines, "tokenizers", "source " + number(model["source_vocab"]) + " pieces, target " +
                               number(model["target_vocab"]) + " pieces" +
                               (model["shared_vocab"].get<bool>() ? " (one shared tokenizer)" : ""));
  const auto& train = report["training_config"];
  std::string how = report["step"].is_null() ? "updates not recorded" : number(report["step"]) + " updates";
  how += "; precision " + number(train["precision"]) + ", batch_tokens " + number(train["batch_tokens"]) +
         ", schedule " + number(train["schedule"]) + " (learning_rate " + number(train["learning_rate"]) + ")" +
         ", metric " + number(train["metric"]) + ", seed " + number(train["seed"]) + " (--json: every setting)";
  add(lines, "trained", how);
  const auto& state = report["training_state"];
  if (!state.is_null()) {
    std::string text = "can resume training";
    if (state.contains("epoch"))
      text += ": epoch " + std::to_string(state["epoch"].get<int64_t>() + 1) + ", batch " +
              number(state.value("batch_in_epoch", nlohmann::json(0))) + " of it";
    if (state.contains("elapsed_seconds")) {
      char minutes[48];
      std::snprintf(minutes, sizeof minutes, ", %.1f min of training", state["elapsed_seconds"].get<double>() / 60);
      text += minutes;
    }
    if (state.value("has_best", int64_t{0}) != 0)
      text += ", best " + number(train["metric"]) + " " + number(state["best_metric"]) +
              (state.value("best_step", int64_t{-1}) >= 0 ? " at step " + number(state["best_step"]) : "");
    add(lines, "state", text);
  }
  const auto& log = report["log"];
  if (log.is_null()) {
    add(lines, "validation", "no train.jsonl beside the file");
  } else {
    const std::string from = " (" + log["path"].get<std::string>() + ")";
    if (!log["at_step"].is_null()) add(lines, "validation", validation_text(log["at_step"]) + from);
    else add(lines, "validation", "none logged for this file's step" + from);
    if (!log["best"].is_null()) add(lines, "run's best", validation_text(log["best"]));
  }
  return lines;
}

}  // namespace nmt
