#include "nmt/base/config.h"

#include <fstream>
#include <set>

#include "nmt/base/error.h"

namespace nmt {
namespace {

using nlohmann::json;

// One list of fields per section, used for loading, saving and overrides alike, so
// a new field cannot be forgotten in one of them.
template <typename Visitor>
void visit(ModelConfig& c, Visitor&& v) {
  v("arch", c.arch);
  v("source_vocab", c.source_vocab);
  v("target_vocab", c.target_vocab);
  v("dropout", c.dropout);
  v("embedding_dim", c.embedding_dim);
  v("hidden_dim", c.hidden_dim);
  v("rnn_layers", c.rnn_layers);
  v("attention", c.attention);
  v("input_feeding", c.input_feeding);
  v("d_model", c.d_model);
  v("heads", c.heads);
  v("ffn_dim", c.ffn_dim);
  v("encoder_layers", c.encoder_layers);
  v("decoder_layers", c.decoder_layers);
  v("norm", c.norm);
  v("attention_dropout", c.attention_dropout);
  v("share_embeddings", c.share_embeddings);
  v("tie_output", c.tie_output);
  v("max_positions", c.max_positions);
}

template <typename Visitor>
void visit(TrainConfig& c, Visitor&& v) {
  v("batch_tokens", c.batch_tokens);
  v("max_length", c.max_length);
  v("accumulate", c.accumulate);
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
  v("max_steps", c.max_steps);
  v("max_epochs", c.max_epochs);
  v("max_time_minutes", c.max_time_minutes);
  v("valid_every", c.valid_every);
  v("log_every", c.log_every);
  v("patience", c.patience);
  v("metric", c.metric);
  v("keep_last", c.keep_last);
  v("valid_max_sentences", c.valid_max_sentences);
  v("seed", c.seed);
}

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
    if (!type_matches(*it, field))
      throw Error(where + "." + key + ": expected " + type_name(field) + ", got " + it->dump());
    it->get_to(field);
  });
  for (const auto& item : object.items())
    if (!known.count(item.key())) throw Error(where + ": unknown key \"" + item.key() + "\"");
}

template <typename Section>
json save_section(Section section) {
  json object = json::object();
  visit(section, [&](const char* key, auto& field) { object[key] = field; });
  return object;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw Error("invalid config: " + message);
}

}  // namespace

void Config::validate() const {
  const auto& m = model;
  const auto& t = train;
  require(m.arch == "gru" || m.arch == "attention" || m.arch == "transformer",
          "model.arch must be gru, attention or transformer, not \"" + m.arch + "\"");
  require(m.attention == "bahdanau" || m.attention == "dot" || m.attention == "general" ||
              m.attention == "concat",
          "model.attention must be bahdanau, dot, general or concat");
  require(m.norm == "pre" || m.norm == "post", "model.norm must be pre or post");
  require(m.dropout >= 0 && m.dropout < 1, "model.dropout must be in [0, 1)");
  require(m.attention_dropout >= 0 && m.attention_dropout < 1, "model.attention_dropout must be in [0, 1)");
  require(m.embedding_dim > 0 && m.hidden_dim > 0 && m.rnn_layers > 0, "RNN sizes must be positive");
  require(m.arch != "attention" || m.hidden_dim % 2 == 0,
          "model.hidden_dim must be even for the bidirectional encoder");
  require(m.d_model > 0 && m.heads > 0 && m.d_model % m.heads == 0,
          "model.d_model must be a positive multiple of model.heads");
  require(m.ffn_dim > 0 && m.encoder_layers > 0 && m.decoder_layers > 0, "Transformer sizes must be positive");
  require(t.batch_tokens > 0, "train.batch_tokens must be positive");
  require(t.max_length > 0, "train.max_length must be positive");
  require(t.accumulate > 0, "train.accumulate must be positive");
  require(t.learning_rate > 0, "train.learning_rate must be positive");
  require(t.schedule == "constant" || t.schedule == "noam" || t.schedule == "plateau",
          "train.schedule must be constant, noam or plateau");
  require(t.warmup_steps >= 0, "train.warmup_steps must be >= 0");
  require(t.label_smoothing >= 0 && t.label_smoothing < 1, "train.label_smoothing must be in [0, 1)");
  require(t.clip_norm >= 0, "train.clip_norm must be >= 0");
  require(t.valid_every > 0 && t.log_every > 0, "train.valid_every and train.log_every must be positive");
  require(t.metric == "bleu" || t.metric == "chrf" || t.metric == "loss", "train.metric must be bleu, chrf or loss");
  require(t.max_steps >= 0 && t.max_epochs >= 0 && t.max_time_minutes >= 0, "limits must be >= 0");
}

Config config_from_json(const json& document, const std::string& origin) {
  if (!document.is_object()) throw Error(origin + ": expected a JSON object");
  Config config;
  for (const auto& item : document.items()) {
    if (item.key() == "model") load_section(item.value(), config.model, origin + ": model");
    else if (item.key() == "train") load_section(item.value(), config.train, origin + ": train");
    else throw Error(origin + ": unknown section \"" + item.key() + "\" (expected model, train)");
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
  } catch (const json::parse_error& e) {
    throw Error(path + ": invalid JSON: " + e.what());
  }
  return config_from_json(document, path);
}

void apply_override(Config& config, const std::string& assignment) {
  const auto equals = assignment.find('=');
  const auto dot = assignment.find('.');
  if (equals == std::string::npos || dot == std::string::npos || dot > equals)
    throw Error("override \"" + assignment + "\" is not of the form section.key=value");
  const auto section = assignment.substr(0, dot);
  const auto key = assignment.substr(dot + 1, equals - dot - 1);
  const auto text = assignment.substr(equals + 1);
  json value = json::parse(text, nullptr, false);
  if (value.is_discarded()) value = text;  // bare words are strings: arch=gru
  auto document = config_to_json(config);
  if (!document.contains(section) || !document[section].contains(key))
    throw Error("override \"" + assignment + "\": unknown key " + section + "." + key);
  document[section][key] = value;
  config = config_from_json(document, "override \"" + assignment + "\"");
}

}  // namespace nmt
