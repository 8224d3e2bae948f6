#pragma once
// What changes while a run trains and must survive a resume, apart from the weights and the
// optimizer's moments: a value that saves itself into a checkpoint's training archive and
// loads itself back.
#include <torch/serialize/archive.h>
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nmt/training/schedule.h"

namespace nmt {

/// The random streams a resumed run goes on with: LibTorch's CPU generator (initialisation
/// and dropout draw from it; the data order has seeds of its own) and, on a GPU, the device's.
struct RandomStreams {
  torch::Tensor cpu;     ///< the CPU generator's state
  torch::Tensor device;  ///< the GPU generator's (undefined: a CPU run, or none was saved)

  /// The generators' states now, `device`'s too where it is a GPU.
  static RandomStreams capture(const torch::Device& device);
  /// Sets the generators to these states. Returns false where `device` is a GPU and no GPU
  /// state was saved (its stream then starts anew); the CPU's is always set.
  bool apply(const torch::Device& device) const;
};

struct TrainingState {
  int64_t step = 0;            ///< updates done
  int64_t epoch = 0;           ///< current epoch (0-based)
  int64_t batch_in_epoch = 0;  ///< next batch of the current epoch
  double best_metric = 0;
  bool has_best = false;
  int64_t best_step = -1;  ///< the step best.pt holds (-1: unknown, a run from before it was stored)
  int64_t bad_validations = 0;
  double elapsed_seconds = 0;  ///< over every start of the run (resumes included)
  PlateauState plateau;        ///< the learning-rate schedule's
  RandomStreams random;        ///< as captured when the state was last saved or loaded

  /// Writes every field by name into `training` (as "progress_fields": a field added later
  /// cannot shift the others) and the random streams ("rng", "cuda_rng" where there is one).
  void save(torch::serialize::OutputArchive& training) const;
  /// Reads what save wrote, or the layout of checkpoints from before the fields had names.
  /// A missing field is an nmt::Error naming it and `path`; applying the random streams is
  /// the caller's (RandomStreams::apply).
  static TrainingState load(torch::serialize::InputArchive& training, const std::string& path);

  /// What every rank takes from rank 0 after a validation (only rank 0 validates, and every
  /// rank must step with the same learning rate), as numbers in a fixed order, and back
  /// (nmt::Error on a list of another length).
  std::vector<double> validation_outcome() const;
  void take_validation_outcome(const std::vector<double>& values);

  /// Every field equal, the random streams' states included.
  bool operator==(const TrainingState& other) const;
};

}  // namespace nmt
