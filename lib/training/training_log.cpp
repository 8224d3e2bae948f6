#include "training_log.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "nmt/base/atomic_file.h"
#include "nmt/base/cli.h"
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

TrainingClock::TrainingClock(double previous_seconds) : previous_seconds_(previous_seconds) {}

void TrainingClock::count(int64_t target_tokens, double loss_sum) {
  window_tokens_ += target_tokens;
  window_loss_ += loss_sum;
}

double TrainingClock::seconds_since_start() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

double TrainingClock::elapsed_seconds() const { return previous_seconds_ + seconds_since_start(); }

void TrainingClock::count_gradient_sum_wait(double seconds) { window_gradient_sum_seconds_ += seconds; }

void TrainingClock::count_validation(double seconds) {
  validation_seconds_ += seconds;
  last_validation_seconds_ = seconds;
}

RunPace TrainingClock::pace() const { return {seconds_since_start() - validation_seconds_, last_validation_seconds_}; }

TrainingClock::Window TrainingClock::peek_window() const {
  const double seconds = std::chrono::duration<double>(Clock::now() - window_start_).count();
  Window window;
  window.tokens_per_second = seconds > 0 ? window_tokens_ / seconds : 0;
  window.loss = window_tokens_ > 0 ? window_loss_ / window_tokens_ : 0;
  window.gradient_sum_share = seconds > 0 ? window_gradient_sum_seconds_ / seconds : 0;
  return window;
}

TrainingClock::Window TrainingClock::take_window() {
  const auto window = peek_window();
  window_start_ = Clock::now(), window_tokens_ = 0, window_loss_ = 0, window_gradient_sum_seconds_ = 0;
  return window;
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
  if (!quiet_) cli::print_line(text);
  write({{"type", "message"}, {"text", text}});
}

void TrainingLog::status(const std::string& text) {
  if (!quiet_) cli::print_line(text);
}

void TrainingLog::config(const Config& config, const std::vector<torch::Tensor>& parameters) {
  int64_t count = 0;
  for (const auto& p : parameters) count += p.numel();
  const auto json = config_to_json(config);
  if (!quiet_)
    cli::print_line("effective config:\n" + json.dump(2) + "\nparameters: " + std::to_string(count));
  write({{"type", "config"}, {"config", json}, {"parameters", count}});
}

namespace {

std::string progress_text(const ProgressLine& p) {
  char line[256];
  std::snprintf(line, sizeof line, "step %6lld | epoch %6.2f | loss %7.4f | lr %.3e | %7.0f tok/s | elapsed %s | ETA %s",
                static_cast<long long>(p.step), p.epoch, p.loss, p.learning_rate, p.tokens_per_second,
                format_duration(p.elapsed_seconds).c_str(), format_duration(p.eta.seconds).c_str());
  std::string text = line;
  if (p.eta.seconds >= 0 && p.eta.validations_unknown) text += " + validations";
  if (p.gradient_sum_share >= 0) {
    std::snprintf(line, sizeof line, " | gradient sum wait %.0f%%", 100 * p.gradient_sum_share);
    text += line;
  }
  return text;
}

}  // namespace

void TrainingLog::progress_between_logs(const ProgressLine& p) {
  if (!quiet_) cli::print_line(progress_text(p));
}

void TrainingLog::progress(const ProgressLine& p) {
  if (!quiet_) cli::print_line(progress_text(p));
  nlohmann::json record = {{"type", "progress"},
                           {"step", p.step},
                           {"epoch", p.epoch},
                           {"loss", p.loss},
                           {"learning_rate", p.learning_rate},
                           {"target_tokens_per_second", p.tokens_per_second},
                           {"elapsed_seconds", p.elapsed_seconds}};
  if (p.eta.seconds >= 0) record["eta_seconds"] = p.eta.seconds;
  if (p.eta.seconds >= 0 && p.eta.validations_unknown) record["eta_excludes_validations"] = true;
  if (p.gradient_sum_share >= 0) record["gradient_sum_wait_share"] = p.gradient_sum_share;
  write(record);
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
      cli::print_line(std::string("note: BLEU is left out of the validation lines: ") + line +
                      " of the references have fewer than 4 words, and BLEU of such sentences is 0 by definition "
                      "(train.jsonl still records it)");
      bleu_note_written_ = true;
    }
    cli::print_line(text + " (" + std::to_string(result.sentences) + " sentences)" + (best ? " | new best" : ""));
  }
  nlohmann::json record = {{"type", "validation"}, {"step", step},          {"loss", result.loss},
                           {"perplexity", result.perplexity}, {"sentences", result.sentences}, {"best", best}};
  for (const auto& [name, score] : result.scores) record[name] = score;
  write(record);
}

}  // namespace nmt
