#include "nmt/training/training_log.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/eval/metric.h"

namespace nmt {

std::string format_duration(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "?";
  const long s = std::lround(seconds);
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return text;
}

TrainingLoop::TrainingLoop(const TrainConfig& config, double previous_seconds, int64_t start_step,
                           int64_t start_epoch)
    : config_(config), previous_seconds_(previous_seconds), start_step_(start_step),
      start_epoch_(static_cast<double>(start_epoch)) {}

void TrainingLoop::count(int64_t target_tokens, double loss_sum) {
  window_tokens_ += target_tokens;
  window_loss_ += loss_sum;
}

double TrainingLoop::elapsed_seconds() const {
  return previous_seconds_ + std::chrono::duration<double>(Clock::now() - start_).count();
}

std::pair<double, double> TrainingLoop::take_window() {
  const auto now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - window_start_).count();
  const double rate = seconds > 0 ? window_tokens_ / seconds : 0;
  const double loss = window_tokens_ > 0 ? window_loss_ / window_tokens_ : 0;
  window_start_ = now, window_tokens_ = 0, window_loss_ = 0;
  return {rate, loss};
}

double TrainingLoop::eta_seconds(int64_t step, double epoch_fraction) const {
  const double since_start = std::chrono::duration<double>(Clock::now() - start_).count();
  double eta = -1;
  auto consider = [&](double left) {
    if (left >= 0 && (eta < 0 || left < eta)) eta = left;
  };
  if (config_.max_steps > 0 && step > start_step_)
    consider(since_start / double(step - start_step_) * double(config_.max_steps - step));
  if (config_.max_epochs > 0 && epoch_fraction > start_epoch_)
    consider(since_start / (epoch_fraction - start_epoch_) * (double(config_.max_epochs) - epoch_fraction));
  if (config_.max_time_minutes > 0) consider(config_.max_time_minutes * 60 - elapsed_seconds());
  return eta;
}

std::string TrainingLoop::stop_reason(int64_t step, double epoch_fraction, bool early_stop, int signal) const {
  if (signal != 0) return "interrupted by signal " + std::to_string(signal);
  if (early_stop) return "early stopping (patience " + std::to_string(config_.patience) + ")";
  if (config_.max_steps > 0 && step >= config_.max_steps) return "reached max_steps";
  if (config_.max_time_minutes > 0 && elapsed_seconds() >= config_.max_time_minutes * 60)
    return "reached max_time_minutes";
  return {};
}

TrainingLog::TrainingLog(bool quiet, bool records) : quiet_(quiet), records_(records) {}

void TrainingLog::open(const std::string& jsonl_path, int64_t resumed_step) {
  std::ifstream previous(jsonl_path);
  std::string kept, line;
  bool dropped = false;
  while (std::getline(previous, line)) {
    const auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() && previous.peek() == std::char_traits<char>::eof()) {
      dropped = true;  // the last line, torn by a kill in the middle of writing it
      continue;
    }
    const bool replayed = record.is_object() && record.contains("step") && record["step"].is_number_integer() &&
                          record["step"].get<int64_t>() > resumed_step;
    if (replayed) dropped = true;
    else kept += line + "\n";
  }
  previous.close();
  if (dropped) write_file_atomically(jsonl_path, kept);
  jsonl_.open(jsonl_path, std::ios::app);
  if (!jsonl_) throw Error("cannot write " + jsonl_path);
  for (const auto& record : pending_) write(record);
  pending_.clear();
}

void TrainingLog::write(const nlohmann::json& record) {
  if (!jsonl_.is_open()) {
    if (records_) pending_.push_back(record);
    return;
  }
  jsonl_ << record.dump() << std::endl;
  if (!jsonl_) throw Error("cannot write train.jsonl (disk full?)");
}

void TrainingLog::error(const std::string& text) {
  if (jsonl_.is_open()) jsonl_ << nlohmann::json{{"type", "error"}, {"text", text}}.dump() << std::endl;
}

void TrainingLog::message(const std::string& text) {
  if (!quiet_) std::cerr << text << std::endl;
  write({{"type", "message"}, {"text", text}});
}

void TrainingLog::config(const Config& config, const std::vector<torch::Tensor>& parameters) {
  int64_t count = 0;
  for (const auto& p : parameters) count += p.numel();
  const auto json = config_to_json(config);
  if (!quiet_)
    std::cerr << "effective config:\n" << json.dump(2) << "\nparameters: " << count << std::endl;
  write({{"type", "config"}, {"config", json}, {"parameters", count}});
}

void TrainingLog::progress(int64_t step, double epoch, TrainingLoop& loop, double learning_rate) {
  const auto [rate, loss] = loop.take_window();
  const double elapsed = loop.elapsed_seconds();
  const double eta = loop.eta_seconds(step, epoch);
  if (!quiet_) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "step %6lld | epoch %6.2f | loss %7.4f | lr %.3e | %7.0f tok/s | elapsed %s | ETA %s",
                  static_cast<long long>(step), epoch, loss, learning_rate, rate,
                  format_duration(elapsed).c_str(), format_duration(eta).c_str());
    std::cerr << line << std::endl;
  }
  write({{"type", "progress"}, {"step", step}, {"epoch", epoch}, {"loss", loss},
         {"learning_rate", learning_rate}, {"target_tokens_per_second", rate},
         {"elapsed_seconds", elapsed}});
}

void TrainingLog::validation(int64_t step, const ValidationResult& result, bool best,
                             const std::string& chosen_metric) {
  if (!quiet_) {
    char line[256];
    std::snprintf(line, sizeof line, "validation @ step %lld | loss %.4f | ppl %.2f", static_cast<long long>(step),
                  result.loss, result.perplexity);
    std::string text = line;
    const bool bleu_meaningless = result.short_reference_share >= 0.5;
    std::vector<const Metric*> shown;
    for (const auto& metric : metrics()) {
      if (bleu_meaningless && metric.name == "bleu" && chosen_metric != "bleu") continue;
      shown.insert(metric.name == chosen_metric ? shown.begin() : shown.end(), &metric);
    }
    for (const auto* metric : shown) {
      std::snprintf(line, sizeof line, " | %s %.2f", metric->label.c_str(), result.scores.at(metric->name));
      text += line;
    }
    if (bleu_meaningless && !bleu_note_written_) {
      std::snprintf(line, sizeof line, "%.0f%%", 100 * result.short_reference_share);
      std::cerr << "note: BLEU is left out of the validation lines: " << line
                << " of the references have fewer than 4 words, and BLEU of such sentences is 0 by definition "
                   "(train.jsonl still records it)"
                << std::endl;
      bleu_note_written_ = true;
    }
    std::cerr << text << " (" << result.sentences << " sentences)" << (best ? " | new best" : "") << std::endl;
  }
  nlohmann::json record = {{"type", "validation"}, {"step", step},          {"loss", result.loss},
                           {"perplexity", result.perplexity}, {"sentences", result.sentences}, {"best", best}};
  for (const auto& [name, score] : result.scores) record[name] = score;
  write(record);
}

}  // namespace nmt
