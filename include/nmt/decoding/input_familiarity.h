#pragma once
// Input unlike what a model was trained on, told from the pieces it tokenizes into: their
// mean information (bits per piece) under the piece frequencies of the training corpus'
// source side (LoadedModel::source_piece_counts), against that corpus' own entropy. With
// one tokenizer for both languages, English fed to a de->en model still tokenizes into
// known pieces, but pieces of the target side, rare on the source side: on Multi30k, with
// an 8,000-piece shared tokenizer, German validation text takes 9.2 bits a piece (the
// training source's entropy: 9.1), English 15.6 and French 13.3.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/models/checkpoint.h"

namespace nmt {

class InputFamiliarity {
 public:
  /// The warning needs this many pieces read, and this many bits a piece above the entropy
  /// (each piece on average 2^3 = 8 times less frequent in training than the training text's
  /// own: above what a change of topic costs, below what a wrong language does).
  static constexpr int64_t kMinPieces = 20;
  static constexpr double kExcessBits = 3.0;

  /// A model without counts (older files) never warns.
  explicit InputFamiliarity(const LoadedModel& model);

  /// One input line's source ids (as the model read them).
  void count(const std::vector<int>& source_ids);
  /// Mean bits a piece of the input so far (0 before any).
  double input_bits() const;
  /// The training source's entropy, bits a piece.
  double training_bits() const { return training_bits_; }
  /// The warning, the first time the input reads unlike the training data; "" otherwise and
  /// ever after.
  std::string warning_once();

 private:
  std::vector<double> bits_;  // per source id: -log2 of its smoothed training frequency
  double unseen_bits_ = 0;    // an id outside the table (not from the model's tokenizer)
  double training_bits_ = 0;
  std::vector<bool> unseen_;  // per source id: never in the training source
  double bits_sum_ = 0;
  int64_t pieces_ = 0, unseen_pieces_ = 0;
  bool warned_ = false;
};

}  // namespace nmt
