#include "nmt/serve/request.h"

#include <limits>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "nmt/text/corpus.h"

namespace nmt::serve {
namespace {

using nlohmann::json;

json parse_body(const std::string& body) {
  // Checked first so the error says "UTF-8" rather than the JSON lexer's byte offset.
  if (const auto problem = utf8_problem(body); !problem.empty())
    throw RequestError(400, "request body: " + problem);
  // The last key read, to name the field of a number no double holds (1e400): the library
  // throws that as out_of_range, not as a parse error, from inside parse().
  std::string field;
  const json::parser_callback_t note_keys = [&field](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key) field = parsed.get<std::string>();
    return true;
  };
  try {
    return json::parse(body, note_keys);
  } catch (const json::parse_error& e) {
    throw RequestError(400, std::string("malformed JSON: ") + e.what());
  } catch (const json::out_of_range& e) {
    throw RequestError(400, (field.empty() ? std::string("a number") : "\"" + field + "\"") +
                                ": number out of range (" + e.what() + ")");
  } catch (const json::exception& e) {  // whatever else the library may throw on input
    throw RequestError(400, std::string("malformed JSON: ") + e.what());
  }
}

void check_line(const std::string& line, const std::string& where, const RequestLimits& limits) {
  if (line.size() > limits.max_line_bytes)
    throw RequestError(413, where + " has " + std::to_string(line.size()) + " bytes, more than the limit of " +
                                std::to_string(limits.max_line_bytes) + " (--max-line-bytes)");
  if (line.find('\n') != std::string::npos || line.find('\r') != std::string::npos)
    throw RequestError(400, where + " contains a line break; send one sentence per entry");
}

void check_line_count(size_t count, const RequestLimits& limits) {
  if (count == 0) throw RequestError(400, "no lines to translate");
  if (count > limits.max_lines)
    throw RequestError(413, std::to_string(count) + " lines, more than the limit of " +
                                std::to_string(limits.max_lines) + " (--max-lines)");
}

JobOptions read_options(const json& object, const JobOptions& defaults, const RequestLimits& limits) {
  JobOptions options = defaults;
  // On top of each option's own bounds, the server's: a beam of at most limits.max_beam
  // (what a request may cost), an n-best of at most the request's beam.
  const SearchOptionCap server_caps = [&limits](const SearchOptionSpec& spec, const SearchOptions& read) {
    if (spec.name == "beam") return static_cast<double>(limits.max_beam);
    if (spec.name == "nbest") return static_cast<double>(read.beam);
    return spec.high;
  };
  try {
    read_search_options(object, SearchOptionUse::request, options.search, server_caps);
  } catch (const SearchOptionError& e) {
    throw RequestError(400, e.what());
  }
  // A request that lowers the beam below the default n-best gets as many as its beam gives.
  if (!object.contains("nbest")) options.search.nbest = std::min(defaults.search.nbest, options.search.beam);
  if (object.contains("attention")) {
    if (!object.at("attention").is_boolean()) throw RequestError(400, "\"attention\" must be true or false");
    options.attention = object.at("attention").get<bool>();
  }
  return options;
}

std::vector<std::string> read_text(const json& text, const RequestLimits& limits) {
  if (text.is_string()) return read_text(json::array({text}), limits);
  if (!text.is_array()) throw RequestError(400, "\"text\" must be a string or an array of strings");
  check_line_count(text.size(), limits);
  std::vector<std::string> lines;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string where = "text[" + std::to_string(i) + "]";
    if (!text[i].is_string()) throw RequestError(400, where + " must be a string");
    auto line = text[i].get<std::string>();
    check_line(line, where, limits);
    if (is_blank(line)) throw RequestError(400, where + " is empty");
    lines.push_back(std::move(line));
  }
  return lines;
}

// "prefix": a string for a one-line request, or one string per line ("" = none).
std::vector<std::string> read_prefixes(const json& prefix, size_t lines, const RequestLimits& limits) {
  if (prefix.is_string()) return read_prefixes(json::array({prefix}), lines, limits);
  if (!prefix.is_array() || prefix.size() != lines)
    throw RequestError(400, "\"prefix\" must be a string or an array of strings, one per line of \"text\" (" +
                                std::to_string(lines) + ")");
  std::vector<std::string> prefixes;
  for (size_t i = 0; i < prefix.size(); ++i) {
    const std::string where = "prefix[" + std::to_string(i) + "]";
    if (!prefix[i].is_string()) throw RequestError(400, where + " must be a string");
    prefixes.push_back(prefix[i].get<std::string>());
    check_line(prefixes.back(), where, limits);
  }
  return prefixes;
}

// "constraints": per line an array of phrases; for a one-line request also one flat array.
std::vector<std::vector<std::string>> read_constraints(const json& constraints, size_t lines, const RequestLimits& limits) {
  const bool flat = constraints.is_array() && lines == 1 && std::all_of(constraints.begin(), constraints.end(),
                                                                        [](const json& x) { return x.is_string(); });
  if (flat) return read_constraints(json::array({constraints}), lines, limits);
  if (!constraints.is_array() || constraints.size() != lines)
    throw RequestError(400, "\"constraints\" must be one array of phrases per line of \"text\" (" +
                                std::to_string(lines) + ")");
  std::vector<std::vector<std::string>> all(lines);
  for (size_t i = 0; i < lines; ++i) {
    const std::string where = "constraints[" + std::to_string(i) + "]";
    if (!constraints[i].is_array()) throw RequestError(400, where + " must be an array of strings");
    if (constraints[i].size() > 64) throw RequestError(413, where + " has more than 64 phrases");
    for (size_t k = 0; k < constraints[i].size(); ++k) {
      const std::string phrase_where = where + "[" + std::to_string(k) + "]";
      if (!constraints[i][k].is_string()) throw RequestError(400, phrase_where + " must be a string");
      all[i].push_back(constraints[i][k].get<std::string>());
      check_line(all[i].back(), phrase_where, limits);
    }
  }
  return all;
}

}  // namespace

void check_request_cost(size_t lines, const JobOptions& options, const RequestLimits& limits) {
  const size_t beam_lines = lines * static_cast<size_t>(options.search.beam);
  if (beam_lines > limits.max_beam_lines)
    throw RequestError(413, std::to_string(lines) + " lines at beam " + std::to_string(options.search.beam) + " are " +
                                std::to_string(beam_lines) + " beam lines, more than the limit of " +
                                std::to_string(limits.max_beam_lines) +
                                " (--max-beam-lines): send fewer lines per request or a smaller beam");
  const size_t with_attention = options.attention ? lines * static_cast<size_t>(options.search.nbest) : 0;
  if (with_attention > limits.max_attention_hypotheses)
    throw RequestError(413, std::to_string(lines) + " lines with nbest " + std::to_string(options.search.nbest) +
                                " and attention are " + std::to_string(with_attention) +
                                " hypotheses with attention, more than the limit of " +
                                std::to_string(limits.max_attention_hypotheses) + " (--max-attention-hypotheses)");
}

TranslateRequest parse_translate_request(const std::string& body, const JobOptions& defaults,
                                         const RequestLimits& limits) {
  const auto request = parse_body(body);
  if (!request.is_object()) throw RequestError(400, "the request must be a JSON object with \"text\"");
  static const std::vector<std::string> known = [] {
    std::vector<std::string> keys = {"text", "prefix", "constraints", "attention"};
    for (const auto& key : search_option_keys(SearchOptionUse::request)) keys.push_back(key);
    return keys;
  }();
  for (const auto& item : request.items()) {
    if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
    std::string list;
    for (const auto& key : known) list += (list.empty() ? "" : ", ") + key;
    throw RequestError(400, "unknown field \"" + item.key() + "\" (known: " + list + ")");
  }
  if (!request.contains("text")) throw RequestError(400, "missing \"text\"");
  TranslateRequest parsed{read_text(request.at("text"), limits), read_options(request, defaults, limits), {}};
  const size_t lines = parsed.lines.size();
  check_request_cost(lines, parsed.options, limits);
  if (request.contains("prefix") || request.contains("constraints")) parsed.guides.resize(lines);
  if (request.contains("prefix")) {
    const auto prefixes = read_prefixes(request.at("prefix"), lines, limits);
    for (size_t i = 0; i < lines; ++i) parsed.guides[i].prefix = prefixes[i];
  }
  if (request.contains("constraints")) {
    if (parsed.options.search.beam < 2) throw RequestError(400, "\"constraints\" need beam search: \"beam\" 2 or more");
    auto constraints = read_constraints(request.at("constraints"), lines, limits);
    for (size_t i = 0; i < lines; ++i) parsed.guides[i].constraints = std::move(constraints[i]);
  }
  return parsed;
}

TranslateRequest parse_opennmt_request(const std::string& body, const JobOptions& defaults,
                                       const RequestLimits& limits) {
  const auto request = parse_body(body);
  if (!request.is_array()) throw RequestError(400, "the request must be a JSON array of {\"src\": ..., \"id\": ...}");
  check_line_count(request.size(), limits);
  TranslateRequest parsed{{}, defaults, {}};
  for (size_t i = 0; i < request.size(); ++i) {
    const std::string where = "[" + std::to_string(i) + "]";
    const auto& entry = request[i];
    if (!entry.is_object() || !entry.contains("src")) throw RequestError(400, where + " must be an object with \"src\"");
    if (!entry.at("src").is_string()) throw RequestError(400, where + ".src must be a string");
    if (entry.contains("id") && !entry.at("id").is_number_integer())
      throw RequestError(400, where + ".id must be an integer (a model id)");
    auto line = entry.at("src").get<std::string>();
    check_line(line, where + ".src", limits);
    parsed.lines.push_back(std::move(line));
  }
  check_request_cost(parsed.lines.size(), parsed.options, limits);
  return parsed;
}

size_t max_request_bytes(const RequestLimits& limits) {
  constexpr size_t kAll = std::numeric_limits<size_t>::max();
  constexpr size_t kPerLineJson = 64, kEnvelope = 4096;
  if (limits.max_line_bytes > (kAll - kPerLineJson) / 6) return kAll;
  const size_t per_line = limits.max_line_bytes * 6 + kPerLineJson;
  if (limits.max_lines > (kAll - kEnvelope) / per_line) return kAll;
  return limits.max_lines * per_line + kEnvelope;
}

}  // namespace nmt::serve
