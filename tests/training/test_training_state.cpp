// The training state saves itself and loads itself back, field for field, from every layout
// checkpoints have had; what ranks share after a validation goes there and back.
#include "support/catch.h"

#include <torch/torch.h>

#include <sstream>

#include "nmt/base/error.h"
#include "nmt/training/training_state.h"

using nmt::TrainingState;

namespace {

TrainingState some_state() {
  TrainingState s;
  s.step = 1234, s.epoch = 3, s.batch_in_epoch = 17, s.best_metric = 31.25, s.has_best = true, s.best_step = 1200;
  s.bad_validations = 2, s.elapsed_seconds = 456.5;
  s.plateau = {0.25, 1};
  s.random = nmt::RandomStreams::capture(torch::kCPU);
  return s;
}

// Written into an archive and read back, as a checkpoint's bytes would be.
torch::serialize::InputArchive through_bytes(torch::serialize::OutputArchive& out) {
  std::ostringstream bytes;
  out.save_to(bytes);
  std::istringstream in(bytes.str());
  torch::serialize::InputArchive archive;
  archive.load_from(in);
  return archive;
}

}  // namespace

TEST_CASE("the training state comes back as it was saved", "[training_state]") {
  const auto saved = some_state();
  REQUIRE_FALSE(saved == TrainingState{});
  torch::serialize::OutputArchive out;
  saved.save(out);
  auto in = through_bytes(out);
  CHECK(TrainingState::load(in, "last.pt") == saved);
  // Each field counts in the comparison (else the round trip above proves nothing).
  auto other = saved;
  other.plateau.stalled_validations += 1;
  CHECK_FALSE(other == saved);
  torch::rand({3});  // the generator moves on
  other = saved;
  other.random = nmt::RandomStreams::capture(torch::kCPU);
  CHECK_FALSE(other == saved);
}

TEST_CASE("the random streams go on where they were captured", "[training_state]") {
  const auto streams = nmt::RandomStreams::capture(torch::kCPU);
  const auto first = torch::rand({5});
  CHECK(streams.apply(torch::kCPU));
  CHECK(torch::equal(torch::rand({5}), first));
  CHECK_FALSE(streams.device.defined());  // a CPU run has no GPU stream
}

TEST_CASE("a state without its random stream is an error naming it", "[training_state]") {
  torch::serialize::OutputArchive without;
  // The fields alone, as a damaged checkpoint would hold them.
  torch::serialize::OutputArchive fields;
  for (const char* name : {"step", "epoch", "batch_in_epoch", "has_best", "best_metric", "best_step", "bad_validations",
                           "elapsed_seconds", "stalled_validations", "plateau_scale"})
    fields.write(name, torch::tensor(int64_t(0)));
  without.write("progress_fields", fields);
  auto in = through_bytes(without);
  CHECK_THROWS_WITH(TrainingState::load(in, "run/last.pt"), HasSubstring("run/last.pt: the training state lacks its random state"));
}

TEST_CASE("a state without one of its fields is an error naming it", "[training_state]") {
  torch::serialize::OutputArchive out, fields;
  fields.write("step", torch::tensor(int64_t(5)));
  out.write("progress_fields", fields);
  auto in = through_bytes(out);
  CHECK_THROWS_WITH(TrainingState::load(in, "run/last.pt"), HasSubstring("run/last.pt: the training state lacks \"epoch\""));
}

TEST_CASE("checkpoints from before the fields had names load by position", "[training_state]") {
  torch::serialize::OutputArchive out;
  out.write("progress", torch::tensor(std::vector<int64_t>{1234, 3, 17, 1, 2, 1}));
  out.write("progress_real", torch::tensor(std::vector<double>{31.25, 456.5, 0.25}, torch::kFloat64));
  auto expected = some_state();
  out.write("rng", expected.random.cpu);
  auto in = through_bytes(out);
  expected.best_step = -1;  // not stored then
  CHECK(TrainingState::load(in, "old.pt") == expected);
}

TEST_CASE("what ranks take from rank 0 after a validation is the plateau state", "[training_state]") {
  TrainingState rank0 = some_state(), rank1;
  rank1.take_validation_outcome(rank0.validation_outcome());
  CHECK(rank1.plateau == rank0.plateau);
  CHECK(rank1.step == 0);  // the rest is each rank's own
  CHECK_THROWS_AS(rank1.take_validation_outcome({1.0}), nmt::Error);
}
