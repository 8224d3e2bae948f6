#pragma once
// Self-contained model files: weights, the full config (JSON) and both SentencePiece
// models in one file, written atomically. A `last` checkpoint also carries the
// optimizer, scheduler, progress and RNG state needed to resume training exactly.
#include <torch/serialize/archive.h>

#include <optional>
#include <string>
#include <vector>

#include "nmt/base/config.h"
#include "nmt/models/model.h"
#include "nmt/text/tokenizer.h"

namespace nmt {

struct LoadedModel {
  Config config;
  ModelPtr model;
  Tokenizer source_tokenizer;
  Tokenizer target_tokenizer;
  int64_t step = -1;  ///< training updates behind these weights (-1: not recorded, older files)
  /// How often each source id occurred in the source side of the training corpus (one entry
  /// per source piece; empty: not recorded, older files). What tells input unlike the
  /// training data (decoding/input_familiarity.h).
  std::vector<int64_t> source_piece_counts{};
  /// The files loaded that carry no checksum (written before checkpoints were sealed):
  /// damage to them shows only where it makes a weight non-finite (refused at load).
  std::vector<std::string> unsealed{};
};

/// For --verbose: per file of `loaded.unsealed`, that it carries no checksum and how to
/// re-save it sealed (nmt-average with that one file: the weights stay as they are).
std::vector<std::string> checksum_notes(const LoadedModel& loaded);

/// Loads a checkpoint for inference: builds the model from the stored config, loads
/// its weights, puts it in eval mode on `device`. Throws nmt::Error naming the file, and
/// naming the tensor when a weight is not finite (NaN or infinity: a damaged file).
LoadedModel load_model(const std::string& path, const torch::Device& device = torch::kCPU);
/// The same from an archive already read; `path` names it in errors.
LoadedModel load_model(torch::serialize::InputArchive& archive, const std::string& path,
                       const torch::Device& device = torch::kCPU);

/// Writes weights, config and tokenizers; `extra` (optimizer, progress...) is written
/// under the "training" key when given, the source piece counts when not empty (one per
/// source piece, checked). Atomic: temp file + fsync + rename.
void save_checkpoint(const std::string& path, const Config& config, Seq2SeqModel& model,
                     const Tokenizer& source_tokenizer, const Tokenizer& target_tokenizer,
                     torch::serialize::OutputArchive* training_state = nullptr, int64_t step = -1,
                     const std::vector<int64_t>& source_piece_counts = {});

/// Reads a checkpoint's archive (for resuming): checks the seal (checksum) first.
/// Throws nmt::Error naming the file: missing, corrupted, truncated, or not a checkpoint.
/// `sealed`, when given, tells whether the file carries a checksum.
torch::serialize::InputArchive read_checkpoint_archive(const std::string& path, bool* sealed = nullptr);
/// The same from a checkpoint file's bytes already in memory (`path` names it in errors).
/// `sealed`, when given, tells whether the file carries a checksum.
torch::serialize::InputArchive checkpoint_archive(const std::string& bytes, const std::string& path,
                                                  bool* sealed = nullptr);
/// A checkpoint's two tokenizers, without building its model or reading its weights (for tools
/// that only tokenize: nmt-shortlist). Throws as read_checkpoint_archive does.
struct CheckpointTokenizers {
  Tokenizer source, target;
};
CheckpointTokenizers read_checkpoint_tokenizers(const std::string& path);

/// The step stored in an archive, -1 if none.
int64_t checkpoint_step(torch::serialize::InputArchive& archive);

}  // namespace nmt
