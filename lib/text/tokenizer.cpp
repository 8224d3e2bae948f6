#include "nmt/text/tokenizer.h"

#include <dlfcn.h>

#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <filesystem>
#include <mutex>

#include "nmt/base/atomic_file.h"
#include "nmt/base/new_directories.h"
#include "nmt/text/corpus.h"
#include "nmt/text/line_reader.h"
#include "nmt/base/error.h"
#include "spm_plugin/spm_backend.h"

namespace nmt {
namespace {

// Function table of the SentencePiece plugin, loaded once per process.
struct Backend {
  decltype(&nmt_spm_abi_version) abi_version;
  decltype(&nmt_spm_load) load;
  decltype(&nmt_spm_free) free;
  decltype(&nmt_spm_piece_count) piece_count;
  decltype(&nmt_spm_special_ids) special_ids;
  decltype(&nmt_spm_piece) piece;
  decltype(&nmt_spm_score) score;
  decltype(&nmt_spm_encode_ids) encode_ids;
  decltype(&nmt_spm_encode_pieces) encode_pieces;
  decltype(&nmt_spm_decode_ids) decode_ids;
  decltype(&nmt_spm_train) train;
  const char* trainer_log_level;  // SentencePiece's minloglevel: warnings, or none (see load_backend)
};

// The plugin sits next to libnmt.so; NMT_SPM_PLUGIN overrides the path.
std::string plugin_path() {
  if (const char* path = std::getenv("NMT_SPM_PLUGIN")) return path;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_path), &info) == 0 || info.dli_fname == nullptr)
    throw Error("cannot locate libnmt to find the SentencePiece plugin");
  return (std::filesystem::path(info.dli_fname).parent_path() / "libnmt_spm.so").string();
}

template <typename F>
void bind(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  if (function == nullptr) throw Error(std::string("SentencePiece plugin lacks ") + name);
}

// Whether the deep-bound plugin writes to this program's std::cout and std::cerr. Not in a
// program with copy relocations of them (spm_backend.h): there SentencePiece would crash
// on its first log line, so it is kept from logging (its errors still come back as text).
bool shares_standard_streams(void* library) {
  decltype(&nmt_spm_standard_streams) standard_streams = nullptr;
  bind(library, "nmt_spm_standard_streams", standard_streams);
  const void* out = nullptr;
  const void* err = nullptr;
  standard_streams(&out, &err);
  return out == &std::cout && err == &std::cerr;
}

Backend load_backend() {
  const auto path = plugin_path();
  // RTLD_DEEPBIND: sentencepiece must bind to its own embedded protobuf, not LibTorch's.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (library == nullptr) throw Error("cannot load SentencePiece plugin: " + std::string(dlerror()));
  Backend b{};
  bind(library, "nmt_spm_abi_version", b.abi_version);
  if (b.abi_version() != NMT_SPM_ABI_VERSION)
    throw Error("SentencePiece plugin " + path + " has another ABI version");
  // SentencePiece's levels: 0 info, 1 warning, 2 error, 3 fatal (which ends the process).
  b.trainer_log_level = shares_standard_streams(library) ? "1" : "3";
  bind(library, "nmt_spm_load", b.load);
  bind(library, "nmt_spm_free", b.free);
  bind(library, "nmt_spm_piece_count", b.piece_count);
  bind(library, "nmt_spm_special_ids", b.special_ids);
  bind(library, "nmt_spm_piece", b.piece);
  bind(library, "nmt_spm_score", b.score);
  bind(library, "nmt_spm_encode_ids", b.encode_ids);
  bind(library, "nmt_spm_encode_pieces", b.encode_pieces);
  bind(library, "nmt_spm_decode_ids", b.decode_ids);
  bind(library, "nmt_spm_train", b.train);
  return b;
}

const Backend& backend() {
  static const Backend instance = load_backend();  // thread-safe; an exception retries next time
  return instance;
}

// Sinks: copy the plugin's bytes into memory owned by this side.
void append_to_string(void* context, const char* data, size_t size) {
  static_cast<std::string*>(context)->append(data, size);
}
void push_string(void* context, const char* data, size_t size) {
  static_cast<std::vector<std::string>*>(context)->emplace_back(data, size);
}
void assign_ids(void* context, const int* ids, size_t count) {
  static_cast<std::vector<int>*>(context)->assign(ids, ids + count);
}

// Encode/decode need a context carrying both a result and an error slot.
template <typename Result>
struct Call {
  Result result{};
  std::string error;
};
template <typename Result>
void call_error(void* context, const char* data, size_t size) {
  static_cast<Call<Result>*>(context)->error.assign(data, size);
}
template <typename Result, void (*Sink)(void*, const char*, size_t)>
void call_bytes(void* context, const char* data, size_t size) {
  Sink(&static_cast<Call<Result>*>(context)->result, data, size);
}
void call_ids(void* context, const int* ids, size_t count) {
  assign_ids(&static_cast<Call<std::vector<int>>*>(context)->result, ids, count);
}

}  // namespace

struct Tokenizer::Handle {
  void* processor = nullptr;
  ~Handle() {
    if (processor != nullptr) backend().free(processor);
  }
};

Tokenizer::Tokenizer(std::shared_ptr<Handle> handle, std::string serialized)
    : handle_(std::move(handle)), serialized_(std::move(serialized)) {
  vocab_size_ = backend().piece_count(handle_->processor);
}

Tokenizer Tokenizer::from_file(const std::string& path) {
  return from_serialized(read_file(path, "tokenizer model"), path);
}

Tokenizer Tokenizer::from_serialized(std::string serialized, const std::string& origin) {
  std::string error;
  auto handle = std::make_shared<Handle>();
  handle->processor = backend().load(serialized.data(), serialized.size(), append_to_string, &error);
  if (handle->processor == nullptr)
    throw Error("not a SentencePiece model: " + origin + " (" + error + ")");
  int ids[4];
  backend().special_ids(handle->processor, ids);
  if (ids[0] != SpecialIds::kPad || ids[1] != SpecialIds::kUnk || ids[2] != SpecialIds::kBos ||
      ids[3] != SpecialIds::kEos)
    throw Error("tokenizer " + origin +
                " does not use the fixed special ids pad=0 unk=1 bos=2 eos=3; train it with "
                "nmt-spm-train");
  return Tokenizer(std::move(handle), std::move(serialized));
}

std::vector<int> Tokenizer::encode(std::string_view text) const {
  Call<std::vector<int>> call;
  if (backend().encode_ids(handle_->processor, text.data(), text.size(), call_ids,
                           call_error<std::vector<int>>, &call) != 0)
    throw Error("cannot tokenize: " + call.error);
  return std::move(call.result);
}

std::vector<std::string> Tokenizer::encode_pieces(std::string_view text) const {
  using Pieces = std::vector<std::string>;
  Call<Pieces> call;
  if (backend().encode_pieces(handle_->processor, text.data(), text.size(),
                              call_bytes<Pieces, push_string>, call_error<Pieces>, &call) != 0)
    throw Error("cannot tokenize: " + call.error);
  return std::move(call.result);
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  std::vector<int> content;
  content.reserve(ids.size());
  for (int id : ids)
    if (id != SpecialIds::kPad && id != SpecialIds::kBos && id != SpecialIds::kEos)
      content.push_back(id);
  Call<std::string> call;
  if (backend().decode_ids(handle_->processor, content.data(), content.size(),
                           call_bytes<std::string, append_to_string>, call_error<std::string>,
                           &call) != 0)
    throw Error("cannot detokenize: " + call.error);
  return std::move(call.result);
}

std::string Tokenizer::piece(int id) const {
  if (id < 0 || id >= vocab_size_) throw Error("token id " + std::to_string(id) + " out of range");
  std::string result;
  backend().piece(handle_->processor, id, append_to_string, &result);
  return result;
}

float Tokenizer::score(int id) const { return backend().score(handle_->processor, id); }

// ---------------------------------------------------------------------------
// Training

namespace {

struct TrainingInput {
  std::vector<std::string> sentences;
  size_t next = 0;
  std::string model;
  std::string error;
};

int next_sentence(void* context, const char** data, size_t* size) {
  auto* input = static_cast<TrainingInput*>(context);
  if (input->next == input->sentences.size()) return 0;
  const auto& sentence = input->sentences[input->next++];
  *data = sentence.data();
  *size = sentence.size();
  return 1;
}

void model_sink(void* context, const char* data, size_t size) {
  static_cast<TrainingInput*>(context)->model.assign(data, size);
}
void error_sink(void* context, const char* data, size_t size) {
  static_cast<TrainingInput*>(context)->error.assign(data, size);
}

void validate(const TokenizerTrainOptions& options) {
  if (options.inputs.empty()) throw Error("no input files given");
  if (options.model_prefix.empty()) throw Error("no model prefix given");
  if (options.vocab_size < 8) throw Error("vocabulary size must be at least 8");
  if (options.model_type != "bpe" && options.model_type != "unigram")
    throw Error("model type must be bpe or unigram, not " + options.model_type);
  if (options.max_sentences < 0) throw Error("the sentence limit must be 0 (none) or more");
  if (!(options.character_coverage > 0 && options.character_coverage <= 1))
    throw Error("character coverage must be in (0, 1]");
}

// Non-blank lines of all inputs, streamed; beyond `limit` (0 = none) a uniform sample of
// `limit` of them (reservoir sampling with a seeded generator: the same inputs and seed
// give the same sample, and memory holds `limit` lines whatever the input size). Below the
// limit every line is kept, in input order.
std::vector<std::string> read_training_sentences(const TokenizerTrainOptions& options, TokenizerTrainReport& report) {
  std::vector<std::string> sample;
  std::mt19937_64 random(options.seed);
  const auto limit = static_cast<uint64_t>(options.max_sentences);
  for (const auto& path : options.inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot open " + path + ": " + std::strerror(errno));
    std::string line;
    LineReader reader(in, path);
    uint64_t kept = 0;
    while (reader.next(line)) {
      if (auto problem = utf8_problem(line); !problem.empty()) throw Error(at_line(path, reader.number(), problem));
      if (is_blank(line)) continue;
      ++kept;
      const uint64_t seen = report.sentences_read++;
      if (limit == 0 || seen < limit) {
        sample.push_back(std::move(line));
      } else if (const uint64_t slot = random() % (seen + 1); slot < limit) {
        sample[slot] = std::move(line);
      }
    }
    if (in.bad()) throw Error("cannot read " + path + ": " + std::strerror(errno));
    if (kept == 0) throw Error("input file " + path + " is empty");
  }
  report.sentences_used = sample.size();
  return sample;
}

std::vector<std::pair<std::string, std::string>> trainer_flags(const TokenizerTrainOptions& o) {
  return {{"model_type", o.model_type},
          {"vocab_size", std::to_string(o.vocab_size)},
          {"character_coverage", std::to_string(o.character_coverage)},
          {"num_threads", std::to_string(std::max(1, o.threads))},
          {"pad_id", std::to_string(SpecialIds::kPad)},
          {"unk_id", std::to_string(SpecialIds::kUnk)},
          {"bos_id", std::to_string(SpecialIds::kBos)},
          {"eos_id", std::to_string(SpecialIds::kEos)},
          {"model_prefix", ""},
          {"minloglevel", backend().trainer_log_level},
          // Lines of a corpus can be long; never drop a training sentence silently.
          {"max_sentence_length", "100000"},
          // A vocabulary the data cannot fill must be an error, not a smaller model.
          {"hard_vocab_limit", "true"}};
}

std::string vocab_listing(const Tokenizer& tokenizer) {
  std::string listing;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) {
    char score[32];
    std::snprintf(score, sizeof score, "%g", tokenizer.score(id));
    listing += tokenizer.piece(id) + "\t" + score + "\n";
  }
  return listing;
}

// Trains and writes PREFIX.model and PREFIX.vocab; the folder exists.
TokenizerTrainReport train_tokenizer_into(const TokenizerTrainOptions& options) {
  TokenizerTrainReport report;
  TrainingInput input;
  input.sentences = read_training_sentences(options, report);
  const auto flags = trainer_flags(options);
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : flags) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  if (backend().train(keys.data(), values.data(), keys.size(), next_sentence, model_sink,
                      error_sink, &input) != 0)
    throw Error("SentencePiece training failed: " + input.error);
  const auto tokenizer = Tokenizer::from_serialized(input.model, "the trained model");
  if (tokenizer.vocab_size() != options.vocab_size)
    throw Error("the data filled only " + std::to_string(tokenizer.vocab_size()) + " of " +
                std::to_string(options.vocab_size) + " vocabulary entries; use a smaller --vocab-size");
  // Write both files to temporaries first, so a failure leaves neither behind.
  AtomicFileGroup files;
  files.write(options.model_prefix + ".model", input.model);
  files.write(options.model_prefix + ".vocab", vocab_listing(tokenizer));
  files.commit();
  return report;
}

}  // namespace

TokenizerTrainReport train_tokenizer(const TokenizerTrainOptions& options) {
  validate(options);
  // The prefix's folder before minutes of training: made if missing (and taken away again
  // when the training fails), or refused at once, naming it.
  const auto folder = std::filesystem::path(options.model_prefix).parent_path();
  const NewDirectories made(folder.empty() ? std::filesystem::path(".") : folder);
  try {
    made.create();
  } catch (const std::filesystem::filesystem_error& e) {
    throw Error("cannot create the folder " + folder.string() + " of " + options.model_prefix + ": " +
                e.code().message());
  }
  try {
    return train_tokenizer_into(options);
  } catch (...) {
    made.remove_empty();
    throw;
  }
}


}  // namespace nmt
