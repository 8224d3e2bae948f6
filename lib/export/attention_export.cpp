#include "nmt/export/attention_export.h"

#include <torch/torch.h>

#include <algorithm>

#include "nmt/models/rnn/rnn_config.h"
#include "nmt/text/batching.h"
#include "nmt/base/error.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

using Matrix = std::vector<std::vector<double>>;
const char* const kWordStart = "\xe2\x96\x81";  // U+2581, SentencePiece's word boundary
const char* const kEosPiece = "</s>";

// [T, S] float tensor -> nested vector (rounded to 6 decimals: smaller files, and
// far below what a heatmap or an argmax can tell apart).
Matrix to_matrix(const torch::Tensor& tensor) {
  const auto t = tensor.to(torch::kCPU, torch::kDouble).contiguous();
  const auto a = t.accessor<double, 2>();
  Matrix m(static_cast<size_t>(t.size(0)), std::vector<double>(static_cast<size_t>(t.size(1))));
  for (int64_t i = 0; i < t.size(0); ++i)
    for (int64_t j = 0; j < t.size(1); ++j) m[i][j] = std::round(a[i][j] * 1e6) / 1e6;
  return m;
}

std::vector<std::string> pieces_of(const Tokenizer& tokenizer, const std::vector<int>& ids, bool with_eos) {
  std::vector<std::string> pieces;
  for (int id : ids) pieces.push_back(tokenizer.piece(id));
  if (with_eos) pieces.push_back(kEosPiece);
  return pieces;
}

std::vector<std::string> words_of(const std::vector<std::string>& pieces, const std::vector<int64_t>& index) {
  std::vector<std::string> words;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (static_cast<size_t>(index[i]) >= words.size()) words.emplace_back();
    std::string piece = pieces[i];
    if (piece.rfind(kWordStart, 0) == 0) piece = piece.substr(3);
    words.back() += piece;
  }
  return words;
}

// One matrix in the form the output uses: pieces, or words when asked.
nlohmann::json shaped(const Matrix& matrix, const AttentionExportOptions& options, const std::vector<int64_t>& target_words,
                      const std::vector<int64_t>& source_words) {
  return options.word_level ? aggregate_to_words(matrix, target_words, source_words) : matrix;
}

nlohmann::json layer_entries(const std::vector<torch::Tensor>& per_layer, const std::vector<int64_t>& layers,
                             const AttentionExportOptions& options, const std::vector<int64_t>& rows,
                             const std::vector<int64_t>& columns) {
  nlohmann::json entries = nlohmann::json::array();
  for (int64_t layer : layers) {
    const auto& weights = per_layer[static_cast<size_t>(layer)];  // [T, H, S]
    nlohmann::json entry = {{"layer", layer}, {"mean", shaped(to_matrix(weights.mean(1)), options, rows, columns)}};
    if (options.all_heads) {
      nlohmann::json heads = nlohmann::json::array();
      for (int64_t h = 0; h < weights.size(1); ++h)
        heads.push_back(shaped(to_matrix(weights.select(1, h)), options, rows, columns));
      entry["heads"] = heads;
    }
    entries.push_back(entry);
  }
  return entries;
}

// Encoder and decoder self-attention, teacher-forced on source + the hypothesis.
nlohmann::json self_attention_json(const LoadedModel& model, const ExportInput& input,
                                   const AttentionExportOptions& options, const std::vector<int64_t>& source_words) {
  torch::NoGradGuard no_grad;
  std::vector<int> decoder_input{SpecialIds::kBos};
  decoder_input.insert(decoder_input.end(), input.hypothesis->tokens.begin(), input.hypothesis->tokens.end());
  std::vector<const std::vector<int>*> source_row{&input.source_ids}, target_row{&decoder_input};
  const auto device = model.model->device();  // ids go where the model is (CUDA too)
  const auto source = pad_sequences(source_row, -1, SpecialIds::kEos).to(device);
  const auto target = pad_sequences(target_row, -1, -1).to(device);
  const auto weights = model.model->self_attention(source, target);
  std::vector<std::string> decoder_pieces{"<s>"};
  for (int id : input.hypothesis->tokens) decoder_pieces.push_back(model.target_tokenizer.piece(id));
  const auto decoder_words = word_index_of_pieces(decoder_pieces);
  auto stack = [&](const std::vector<torch::Tensor>& layers, const std::vector<int64_t>& index) {
    std::vector<torch::Tensor> squeezed;  // [1, H, X, X] -> [X, H, X]
    std::vector<int64_t> all;
    for (size_t i = 0; i < layers.size(); ++i) {
      squeezed.push_back(layers[i].squeeze(0).transpose(0, 1));
      all.push_back(static_cast<int64_t>(i));
    }
    return layer_entries(squeezed, all, options, index, index);
  };
  return {{"decoder_input_pieces", decoder_pieces},
          {"encoder", stack(weights.encoder, source_words)},
          {"decoder", stack(weights.decoder, decoder_words)}};
}

}  // namespace

std::vector<int64_t> select_layers(const std::string& spec, int64_t layer_count, const std::string& model_name) {
  if (layer_count == 0)
    throw Error("--layers: the " + model_name + " model has no attention layers to choose from");
  if (spec == "all") {
    std::vector<int64_t> layers(static_cast<size_t>(layer_count));
    for (int64_t i = 0; i < layer_count; ++i) layers[static_cast<size_t>(i)] = i;
    return layers;
  }
  if (spec == "last") return {layer_count - 1};
  try {
    size_t used = 0;
    const long index = std::stol(spec, &used);
    if (used == spec.size() && index >= 0 && index < layer_count) return {index};
  } catch (const std::exception&) {
  }
  throw Error("--layers " + spec + ": expected all, last or a layer index 0.." + std::to_string(layer_count - 1));
}

std::vector<int64_t> word_index_of_pieces(const std::vector<std::string>& pieces) {
  std::vector<int64_t> index;
  int64_t word = -1;
  bool previous_was_special = false;
  for (const auto& piece : pieces) {
    const bool special = piece == kEosPiece || piece == "<s>";
    if (word < 0 || special || previous_was_special || piece.rfind(kWordStart, 0) == 0) ++word;
    index.push_back(word);
    previous_was_special = special;
  }
  return index;
}

Matrix aggregate_to_words(const Matrix& matrix, const std::vector<int64_t>& target_words,
                          const std::vector<int64_t>& source_words) {
  const size_t rows = target_words.empty() ? 0 : static_cast<size_t>(target_words.back() + 1);
  const size_t columns = source_words.empty() ? 0 : static_cast<size_t>(source_words.back() + 1);
  Matrix words(rows, std::vector<double>(columns, 0.0));
  std::vector<double> pieces_per_word(rows, 0.0);
  for (size_t t = 0; t < matrix.size(); ++t) {
    const auto row = static_cast<size_t>(target_words[t]);
    pieces_per_word[row] += 1;
    for (size_t s = 0; s < matrix[t].size(); ++s) words[row][static_cast<size_t>(source_words[s])] += matrix[t][s];
  }
  for (size_t r = 0; r < rows; ++r)
    for (auto& value : words[r]) value = std::round(value / pieces_per_word[r] * 1e6) / 1e6;
  return words;
}

std::string pharaoh_alignment(const Matrix& word_matrix, bool target_has_eos) {
  std::string pairs;
  if (word_matrix.empty()) return pairs;
  // The last row is eos only for a finished hypothesis; one cut at the length limit
  // ends with a real word, which keeps its link.
  const size_t target_words = word_matrix.size() - (target_has_eos ? 1 : 0);
  const size_t source_words = word_matrix[0].size() - 1;  // last column: eos
  for (size_t t = 0; t < target_words && source_words > 0; ++t) {
    const auto& row = word_matrix[t];
    const auto best = std::max_element(row.begin(), row.begin() + static_cast<long>(source_words)) - row.begin();
    if (!pairs.empty()) pairs += ' ';
    pairs += std::to_string(best) + "-" + std::to_string(t);
  }
  return pairs;
}

nlohmann::json export_attention(const LoadedModel& model, const ExportInput& input, const AttentionExportOptions& options) {
  const auto& hypothesis = *input.hypothesis;
  const auto source_pieces = pieces_of(model.source_tokenizer, input.source_ids, true);
  const auto target_pieces = pieces_of(model.target_tokenizer, hypothesis.tokens, hypothesis.finished);
  const auto source_words = word_index_of_pieces(source_pieces);
  const auto target_words = word_index_of_pieces(target_pieces);
  nlohmann::json object = {
      {"line", input.line},
      {"mode", input.mode},
      {"level", options.word_level ? "word" : "piece"},
      {"source", {{"text", input.source_text}, {"pieces", source_pieces}, {"words", words_of(source_pieces, source_words)},
                  {"eos", true}}},
      {"target", {{"text", input.target_text}, {"pieces", target_pieces}, {"words", words_of(target_pieces, target_words)},
                  {"eos", hypothesis.finished}}},
      {"log_prob", hypothesis.log_prob},
      {"score", hypothesis.score},
      {"token_log_probs", hypothesis.token_log_probs},
      {"architecture", model.config.model.arch},
      {"has_attention", model.model->has_attention()}};
  if (!model.model->has_attention()) {
    object["note"] = "this " + model.config.model.arch +
                     " model decodes from a fixed context vector and has no attention; no matrix is exported";
    return object;
  }
  const auto matrix = to_matrix(hypothesis.attention);
  const auto word_matrix = aggregate_to_words(matrix, target_words, source_words);
  object["attention"] = options.word_level ? nlohmann::json(word_matrix) : nlohmann::json(matrix);
  object["alignment"] = pharaoh_alignment(word_matrix, hypothesis.finished);
  if (model.model->attention_layers() > 0) {
    const auto layers = select_layers(options.layers, model.model->attention_layers(), model.config.model.arch);
    object["attention_source"] = "head-mean of decoder layer " + std::to_string(model.model->alignment_layer());
    object["layers"] = layer_entries(hypothesis.layer_attention, layers, options, target_words, source_words);
  } else {
    object["attention_source"] = model.config.model.section<RnnConfig>().attention + " attention of the decoder";
  }
  if (options.self_attention) object["self_attention"] = self_attention_json(model, input, options, source_words);
  return object;
}

nlohmann::json skipped_line(long line, const std::string& mode, const std::string& warning) {
  return {{"line", line}, {"mode", mode}, {"skipped", true}, {"warning", warning}};
}

}  // namespace nmt
