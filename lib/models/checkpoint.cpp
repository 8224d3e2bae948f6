#include "nmt/models/checkpoint.h"

#include <filesystem>
#include <sstream>

#include "nmt/base/atomic_file.h"
#include "nmt/base/error.h"
#include "nmt/base/sealed_file.h"
#include "nmt/models/registry.h"

namespace nmt {
namespace {

const char* const kFormat = "nmt-checkpoint-1";  // the archive's layout inside the seal
const char* const kSealKind = "checkpoint";

torch::Tensor bytes_to_tensor(const std::string& bytes) {
  auto tensor = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
  return tensor;
}

std::string tensor_to_bytes(const torch::Tensor& tensor) {
  const auto contiguous = tensor.contiguous();
  return std::string(static_cast<const char*>(contiguous.data_ptr()), contiguous.numel());
}

std::string read_string(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  return value.toStringRef();
}

// Optional (files written before it was recorded have none); when present, one count per
// source piece, none negative.
std::vector<int64_t> read_piece_counts(torch::serialize::InputArchive& archive, int64_t pieces,
                                       const std::string& path) {
  torch::Tensor counts;
  if (!archive.try_read("source_piece_counts", counts)) return {};
  if (counts.scalar_type() != torch::kInt64 || counts.dim() != 1 || counts.numel() != pieces ||
      counts.lt(0).any().item<bool>())
    throw Error(path + ": source_piece_counts is not one count per source piece (" + std::to_string(pieces) + ")");
  const auto contiguous = counts.contiguous();
  const auto* data = contiguous.data_ptr<int64_t>();
  return {data, data + pieces};
}

}  // namespace

void save_checkpoint(const std::string& path, const Config& config, Seq2SeqModel& model,
                     const Tokenizer& source_tokenizer, const Tokenizer& target_tokenizer,
                     torch::serialize::OutputArchive* training_state, int64_t step,
                     const std::vector<int64_t>& source_piece_counts) {
  if (!source_piece_counts.empty() && static_cast<int64_t>(source_piece_counts.size()) != source_tokenizer.vocab_size())
    throw Error("cannot write checkpoint " + path + ": " + std::to_string(source_piece_counts.size()) +
                " source piece counts for " + std::to_string(source_tokenizer.vocab_size()) + " pieces");
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(std::string(kFormat)));
  archive.write("config", c10::IValue(config_to_json(config).dump()));
  archive.write("source_tokenizer", bytes_to_tensor(source_tokenizer.serialized()));
  archive.write("target_tokenizer", bytes_to_tensor(target_tokenizer.serialized()));
  torch::serialize::OutputArchive weights;
  model.save(weights);
  archive.write("model", weights);
  if (training_state != nullptr) archive.write("training", *training_state);
  if (step >= 0) archive.write("step", c10::IValue(step));
  if (!source_piece_counts.empty())
    archive.write("source_piece_counts", torch::tensor(source_piece_counts, torch::kInt64));
  std::ostringstream bytes;
  try {
    archive.save_to(bytes);
  } catch (const c10::Error& e) {
    throw Error("cannot write checkpoint " + path + ": " + e.what_without_backtrace());
  }
  // Checksummed, then temp file + fsync + rename: a kill at any moment leaves the old
  // file or the new one, and a damaged file is refused on load.
  write_file_atomically(path, seal(kSealKind, bytes.str()));
}

namespace {

std::string read_checkpoint_file(const std::string& path) {
  if (!std::filesystem::exists(path)) throw Error("no such model file: " + path);
  if (std::filesystem::is_directory(path)) throw Error(path + " is a directory, not a model file");
  return read_file(path, "model file");
}

// A file without a checksum may hold any bytes where a weight was; the one damage that
// can be told is a value that no training leaves: NaN or infinity.
void require_finite_weights(Seq2SeqModel& model, const std::string& path) {
  auto check = [&](const std::string& name, const torch::Tensor& tensor) {
    if (!tensor.is_floating_point()) return;
    const auto bad = tensor.numel() - torch::isfinite(tensor).sum().item<int64_t>();
    if (bad > 0)
      throw Error("weights in " + path + ": " + name + " holds " + std::to_string(bad) +
                  " non-finite values (NaN or infinity): the file is damaged");
  };
  for (const auto& item : model.named_parameters()) check(item.key(), item.value());
  for (const auto& item : model.named_buffers()) check(item.key(), item.value());
}

}  // namespace

torch::serialize::InputArchive read_checkpoint_archive(const std::string& path, bool* sealed) {
  return checkpoint_archive(read_checkpoint_file(path), path, sealed);
}

torch::serialize::InputArchive checkpoint_archive(const std::string& bytes, const std::string& path, bool* sealed) {
  // Files written before checkpoints were sealed are bare archives (tests/fixtures/ has some).
  const auto unsealed = unseal(bytes, kSealKind, path);
  if (sealed != nullptr) *sealed = unsealed.sealed;
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(unsealed.payload.data(), unsealed.payload.size());
  } catch (const c10::Error& e) {
    throw Error("not an nmt checkpoint: " + path);
  }
  c10::IValue format;
  if (!archive.try_read("format", format) || !format.isString() || format.toStringRef() != kFormat)
    throw Error("not an nmt checkpoint (or another format version): " + path);
  return archive;
}

int64_t checkpoint_step(torch::serialize::InputArchive& archive) {
  c10::IValue step;
  return archive.try_read("step", step) && step.isInt() ? step.toInt() : -1;
}

LoadedModel load_model(const std::string& path, const torch::Device& device) {
  bool sealed = true;
  auto archive = checkpoint_archive(read_checkpoint_file(path), path, &sealed);
  auto loaded = load_model(archive, path, device);
  if (!sealed) loaded.unsealed.push_back(path);
  return loaded;
}

std::vector<std::string> checksum_notes(const LoadedModel& loaded) {
  std::vector<std::string> notes;
  for (const auto& path : loaded.unsealed)
    notes.push_back(path + " carries no checksum (written before checkpoints were sealed): `nmt-average -o NEW.pt " +
                    path + "` re-saves it sealed, the weights as they are");
  return notes;
}

namespace {

CheckpointTokenizers archive_tokenizers(torch::serialize::InputArchive& archive, const std::string& path) {
  torch::Tensor source_bytes, target_bytes;
  archive.read("source_tokenizer", source_bytes);
  archive.read("target_tokenizer", target_bytes);
  return {Tokenizer::from_serialized(tensor_to_bytes(source_bytes), path + " (source tokenizer)"),
          Tokenizer::from_serialized(tensor_to_bytes(target_bytes), path + " (target tokenizer)")};
}

}  // namespace

CheckpointTokenizers read_checkpoint_tokenizers(const std::string& path) {
  auto archive = read_checkpoint_archive(path);
  return archive_tokenizers(archive, path);
}

LoadedModel load_model(torch::serialize::InputArchive& archive, const std::string& path, const torch::Device& device) {
  auto config = config_from_json(nlohmann::json::parse(read_string(archive, "config")),
                                 path + " (stored config)");
  auto tokenizers = archive_tokenizers(archive, path);
  LoadedModel loaded{config, build_model(config.model), std::move(tokenizers.source), std::move(tokenizers.target)};
  loaded.step = checkpoint_step(archive);
  loaded.source_piece_counts = read_piece_counts(archive, loaded.source_tokenizer.vocab_size(), path);
  torch::serialize::InputArchive weights;
  archive.read("model", weights);
  try {
    loaded.model->load(weights);
  } catch (const c10::Error& e) {
    throw Error("weights in " + path + " do not fit its config: " + e.what_without_backtrace());
  }
  require_finite_weights(*loaded.model, path);
  loaded.model->to(device);
  loaded.model->eval();
  return loaded;
}

}  // namespace nmt
