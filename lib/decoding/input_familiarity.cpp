#include "nmt/decoding/input_familiarity.h"

#include <cmath>
#include <cstdio>

namespace nmt {

// Frequencies smoothed by half a count per piece, so that a piece never seen in training
// has a finite cost (log2 of twice the corpus' pieces: ~20 bits on Multi30k).
InputFamiliarity::InputFamiliarity(const LoadedModel& model) {
  const auto& counts = model.source_piece_counts;
  if (counts.empty()) return;
  double total = 0, seen = 0;
  for (const int64_t c : counts) total += double(c) + 0.5, seen += double(c);
  bits_.reserve(counts.size());
  unseen_.reserve(counts.size());
  for (const int64_t c : counts) {
    const double bits = -std::log2((double(c) + 0.5) / total);
    bits_.push_back(bits);
    unseen_.push_back(c == 0);
    if (seen > 0) training_bits_ += double(c) / seen * bits;
  }
  unseen_bits_ = std::log2(total / 0.5);
}

void InputFamiliarity::count(const std::vector<int>& source_ids) {
  if (bits_.empty()) return;
  for (const int id : source_ids) {
    const bool known = id >= 0 && static_cast<size_t>(id) < bits_.size();
    bits_sum_ += known ? bits_[static_cast<size_t>(id)] : unseen_bits_;
    unseen_pieces_ += !known || unseen_[static_cast<size_t>(id)];
    ++pieces_;
  }
}

double InputFamiliarity::input_bits() const { return pieces_ == 0 ? 0.0 : bits_sum_ / double(pieces_); }

std::string InputFamiliarity::warning_once() {
  if (warned_ || pieces_ < kMinPieces || input_bits() < training_bits_ + kExcessBits) return "";
  warned_ = true;
  char text[400];
  std::snprintf(text, sizeof text,
                "the input reads unlike the source side of the model's training data: its pieces so far take %.1f "
                "bits each under the training data's piece frequencies, the training data itself %.1f, and %.0f%% "
                "of them (%lld of %lld) never occurred there: is the input in the language the model translates "
                "from?",
                input_bits(), training_bits_, 100.0 * double(unseen_pieces_) / double(pieces_),
                static_cast<long long>(unseen_pieces_), static_cast<long long>(pieces_));
  return text;
}

}  // namespace nmt
