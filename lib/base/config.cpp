#include "nmt/base/config.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "nmt/base/error.h"

namespace nmt {
namespace {

using nlohmann::json;

// One list of fields per section, used for loading, saving and overrides alike, so
// a new field cannot be forgotten in one of them. A field may itself be a section.
template <typename Visitor>
void visit(RnnConfig& c, Visitor&& v) {
  v("embedding_dim", c.embedding_dim);
  v("hidden_dim", c.hidden_dim);
  v("layers", c.layers);
  v("attention", c.attention);
  v("input_feeding", c.input_feeding);
}

template <typename Visitor>
void visit(TransformerConfig& c, Visitor&& v) {
  v("d_model", c.d_model);
  v("heads", c.heads);
  v("ffn_dim", c.ffn_dim);
  v("encoder_layers", c.encoder_layers);
  v("decoder_layers", c.decoder_layers);
  v("norm", c.norm);
  v("attention_dropout", c.attention_dropout);
  v("share_embeddings", c.share_embeddings);
  v("tie_output", c.tie_output);
  v("output_bias", c.output_bias);
  v("max_positions", c.max_positions);
  v("positions", c.positions);
  v("decoder_start", c.decoder_start);
  v("ffn_activation", c.ffn_activation);
  v("layer_norm_epsilon", c.layer_norm_epsilon);
  v("decoder_autoreg", c.decoder_autoreg);
}

template <typename Visitor>
void visit(ModelConfig& c, Visitor&& v) {
  v("arch", c.arch);
  v("source_vocab", c.source_vocab);
  v("target_vocab", c.target_vocab);
  v("dropout", c.dropout);
  v("rnn", c.rnn);
  v("transformer", c.transformer);
}

template <typename Visitor>
void visit(TrainConfig& c, Visitor&& v) {
  v("batch_tokens", c.batch_tokens);
  v("max_length", c.max_length);
  v("accumulate", c.accumulate);
  v("overlap_allreduce", c.overlap_allreduce);
  v("allreduce_bucket_mb", c.allreduce_bucket_mb);
  v("allreduce_precision", c.allreduce_precision);
  v("learning_rate", c.learning_rate);
  v("schedule", c.schedule);
  v("warmup_steps", c.warmup_steps);
  v("plateau_factor", c.plateau_factor);
  v("plateau_patience", c.plateau_patience);
  v("min_learning_rate", c.min_learning_rate);
  v("adam_beta1", c.adam_beta1);
  v("adam_beta2", c.adam_beta2);
  v("adam_eps", c.adam_eps);
  v("weight_decay", c.weight_decay);
  v("clip_norm", c.clip_norm);
  v("label_smoothing", c.label_smoothing);
  v("precision", c.precision);
  v("max_steps", c.max_steps);
  v("max_epochs", c.max_epochs);
  v("max_time_minutes", c.max_time_minutes);
  v("valid_every", c.valid_every);
  v("log_every", c.log_every);
  v("patience", c.patience);
  v("metric", c.metric);
  v("keep_last", c.keep_last);
  v("average_last", c.average_last);
  v("save_every", c.save_every);
  v("valid_max_sentences", c.valid_max_sentences);
  v("seed", c.seed);
}

template <typename T>
constexpr bool is_section = std::is_class_v<T> && !std::is_same_v<T, std::string>;

bool type_matches(const json& value, const std::string&) { return value.is_string(); }
bool type_matches(const json& value, const bool&) { return value.is_boolean(); }
bool type_matches(const json& value, const int64_t&) { return value.is_number_integer(); }
bool type_matches(const json& value, const double&) { return value.is_number(); }

const char* type_name(const std::string&) { return "a string"; }
const char* type_name(const bool&) { return "true or false"; }
const char* type_name(const int64_t&) { return "an integer"; }
const char* type_name(const double&) { return "a number"; }

template <typename Section>
void load_section(const json& object, Section& section, const std::string& where) {
  if (!object.is_object()) throw Error(where + ": expected a JSON object");
  std::set<std::string> known;
  visit(section, [&](const char* key, auto& field) {
    known.insert(key);
    const auto it = object.find(key);
    if (it == object.end()) return;
    using Field = std::decay_t<decltype(field)>;
    if constexpr (is_section<Field>) {
      load_section(*it, field, where + "." + key);
    } else {
      if (!type_matches(*it, field))
        // replace: a value with invalid UTF-8 (from --set) is shown with U+FFFD, not thrown on.
        throw Error(where + "." + key + ": expected " + type_name(field) + ", got " +
                    it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      it->get_to(field);
    }
  });
  for (const auto& item : object.items())
    if (!known.count(item.key())) throw Error(where + ": unknown key \"" + item.key() + "\"");
}

template <typename Section>
json save_section(Section section) {
  json object = json::object();
  visit(section, [&](const char* key, auto& field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (is_section<Field>) object[key] = save_section(field);
    else object[key] = field;
  });
  return object;
}

// Model keys from before the family sections: old name -> {section, name in it}.
struct FlatKey {
  const char* old_name;
  const char* section;
  const char* name;
};
constexpr FlatKey kFlatModelKeys[] = {
    {"embedding_dim", "rnn", "embedding_dim"},
    {"hidden_dim", "rnn", "hidden_dim"},
    {"rnn_layers", "rnn", "layers"},
    {"attention", "rnn", "attention"},
    {"input_feeding", "rnn", "input_feeding"},
    {"d_model", "transformer", "d_model"},
    {"heads", "transformer", "heads"},
    {"ffn_dim", "transformer", "ffn_dim"},
    {"encoder_layers", "transformer", "encoder_layers"},
    {"decoder_layers", "transformer", "decoder_layers"},
    {"norm", "transformer", "norm"},
    {"attention_dropout", "transformer", "attention_dropout"},
    {"share_embeddings", "transformer", "share_embeddings"},
    {"tie_output", "transformer", "tie_output"},
    {"max_positions", "transformer", "max_positions"},
};

const FlatKey* find_flat_key(const std::string& name) {
  for (const auto& key : kFlatModelKeys)
    if (name == key.old_name) return &key;
  return nullptr;
}

// Moves old flat keys of a "model" object into their sections.
json upgrade_flat_model(json model, const std::string& where) {
  if (!model.is_object()) return model;
  for (const auto& key : kFlatModelKeys) {
    const auto it = model.find(key.old_name);
    if (it == model.end()) continue;
    auto& section = model[key.section];
    if (!section.is_object()) section = json::object();  // the old key wins over nothing
    if (section.contains(key.name))
      throw Error(where + ": \"" + key.old_name + "\" and \"" + key.section + "." + key.name +
                  "\" both given (the first is the old name of the second)");
    section[key.name] = std::move(*it);
    model.erase(key.old_name);
  }
  return model;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw Error("invalid config: " + message);
}

// The values a number field may take. Every number field of the config has one (a field
// without is refused by validate(), so a new one cannot be added unchecked); a value is
// checked whatever the schedule or family, since a wrong value is wrong even where it is
// unused today.
struct Interval {
  double low, high;
  bool low_open = false, high_open = false;
  bool contains(double v) const {
    return (low_open ? v > low : v >= low) && (high_open ? v < high : v <= high);  // false for NaN
  }
};
constexpr double kNoLimit = std::numeric_limits<double>::infinity();
constexpr Interval kAtLeast0{0, kNoLimit}, kAtLeast1{1, kNoLimit}, kAbove0{0, kNoLimit, true},
    kFraction{0, 1, false, true};

const std::map<std::string, Interval>& number_ranges() {
  static const std::map<std::string, Interval> ranges = {
      {"model.source_vocab", kAtLeast0},   // 0 until the tokenizers set it
      {"model.target_vocab", kAtLeast0},
      {"model.dropout", kFraction},
      {"model.rnn.embedding_dim", kAtLeast1},
      {"model.rnn.hidden_dim", kAtLeast1},
      {"model.rnn.layers", kAtLeast1},
      {"model.transformer.d_model", kAtLeast1},
      {"model.transformer.heads", kAtLeast1},
      {"model.transformer.ffn_dim", kAtLeast1},
      {"model.transformer.encoder_layers", kAtLeast1},
      {"model.transformer.decoder_layers", kAtLeast1},
      {"model.transformer.attention_dropout", kFraction},
      {"model.transformer.max_positions", kAtLeast1},
      {"model.transformer.layer_norm_epsilon", {0, 1, true, true}},
      {"train.batch_tokens", kAtLeast1},
      {"train.max_length", kAtLeast1},
      {"train.accumulate", kAtLeast1},
      {"train.allreduce_bucket_mb", kAbove0},
      {"train.learning_rate", kAbove0},
      {"train.warmup_steps", kAtLeast0},
      {"train.plateau_factor", {0, 1, true, true}},  // 0 would stop learning, 1 never decays
      {"train.plateau_patience", kAtLeast1},
      {"train.min_learning_rate", kAtLeast0},
      {"train.adam_beta1", kFraction},
      {"train.adam_beta2", kFraction},
      {"train.adam_eps", kAbove0},
      {"train.weight_decay", kAtLeast0},
      {"train.clip_norm", kAtLeast0},
      {"train.label_smoothing", kFraction},
      {"train.max_steps", kAtLeast0},
      {"train.max_epochs", kAtLeast0},
      {"train.max_time_minutes", kAtLeast0},
      {"train.valid_every", kAtLeast1},
      {"train.log_every", kAtLeast1},
      {"train.patience", kAtLeast0},
      {"train.keep_last", kAtLeast0},
      {"train.average_last", kAtLeast0},
      {"train.save_every", kAtLeast0},
      {"train.valid_max_sentences", kAtLeast0},
      {"train.seed", kAtLeast0},
  };
  return ranges;
}

std::string describe(const Interval& interval) {
  auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return std::string(text);
  };
  if (interval.high == kNoLimit) return (interval.low_open ? "> " : ">= ") + number(interval.low);
  return "in " + std::string(interval.low_open ? "(" : "[") + number(interval.low) + ", " +
         number(interval.high) + (interval.high_open ? ")" : "]");
}

// Checks every number field of `section` (named `where`) against number_ranges().
template <typename Section>
void check_number_ranges(Section section, const std::string& where) {
  visit(section, [&](const char* key, auto& field) {
    using Field = std::decay_t<decltype(field)>;
    const auto name = where + "." + key;
    if constexpr (is_section<Field>) {
      check_number_ranges(field, name);
    } else if constexpr (std::is_arithmetic_v<Field> && !std::is_same_v<Field, bool>) {
      const auto range = number_ranges().find(name);
      if (range == number_ranges().end()) throw Error("config field " + name + " has no range (a bug)");
      std::ostringstream value;
      value << field;
      require(range->second.contains(static_cast<double>(field)),
              name + " is " + value.str() + "; it must be " + describe(range->second));
    }
  });
}

}  // namespace

void Config::validate() const {
  const auto& m = model;
  const auto& t = train;
  check_number_ranges(m, "model");
  check_number_ranges(t, "train");
  require(!m.arch.empty(), "model.arch is empty");
  require(t.schedule == "constant" || t.schedule == "noam" || t.schedule == "plateau",
          "train.schedule must be constant, noam or plateau");
  require(t.schedule != "noam" || t.warmup_steps > 0,
          "train.warmup_steps must be > 0 with schedule noam (its rate is peak * min(step / warmup, "
          "sqrt(warmup / step))); use schedule constant for a fixed rate");
  require(t.precision == "fp32" || t.precision == "bf16" || t.precision == "auto",
          "train.precision must be fp32, bf16 or auto");
  require(t.allreduce_precision == "fp32" || t.allreduce_precision == "fp16",
          "train.allreduce_precision must be fp32 or fp16");
  require(!t.metric.empty(), "train.metric is empty");
  require(t.average_last <= t.keep_last,
          "train.average_last must be between 0 and train.keep_last (the step checkpoints it averages)");
}

Config config_from_json(const json& document, const std::string& origin) {
  if (!document.is_object()) throw Error(origin + ": expected a JSON object");
  Config config;
  for (const auto& item : document.items()) {
    if (item.key() == "model")
      load_section(upgrade_flat_model(item.value(), origin + ": model"), config.model, origin + ": model");
    else if (item.key() == "train")
      load_section(item.value(), config.train, origin + ": train");
    else
      throw Error(origin + ": unknown section \"" + item.key() + "\" (expected model, train)");
  }
  return config;
}

json config_to_json(const Config& config) {
  return {{"model", save_section(config.model)}, {"train", save_section(config.train)}};
}

Config load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open config " + path);
  json document;
  try {
    document = json::parse(in);
  } catch (const json::exception& e) {  // a parse error, or a number no double holds (out_of_range)
    throw Error(path + ": invalid JSON: " + e.what());
  }
  return config_from_json(document, path);
}

void apply_override(Config& config, const std::string& assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || assignment.find('.') > equals)
    throw Error("override \"" + assignment + "\" is not of the form section.key=value");
  std::string name = assignment.substr(0, equals);
  const auto text = assignment.substr(equals + 1);
  json value = json::parse(text, nullptr, false);
  if (value.is_discarded()) value = text;  // bare words are strings: arch=gru
  if (name.rfind("model.", 0) == 0)
    if (const auto* flat = find_flat_key(name.substr(6)))
      name = std::string("model.") + flat->section + "." + flat->name;
  auto document = config_to_json(config);
  json* node = &document;
  std::stringstream parts(name);
  for (std::string part; std::getline(parts, part, '.');) {
    if (!node->is_object() || !node->contains(part))
      throw Error("override \"" + assignment + "\": unknown key " + name);
    node = &(*node)[part];
  }
  if (node->is_object())
    throw Error("override \"" + assignment + "\": " + name + " is a section; set one of its keys");
  *node = value;
  config = config_from_json(document, "override \"" + assignment + "\"");
}

}  // namespace nmt
