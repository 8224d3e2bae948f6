#include "nmt/training/training_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include <mutex>

#include "nmt/base/error.h"

namespace nmt {
namespace {

// Every field by name, in the order checkpoints have always held them.
template <typename State, typename Visitor>
void visit_fields(State& s, Visitor&& v) {
  v("step", s.step);
  v("epoch", s.epoch);
  v("batch_in_epoch", s.batch_in_epoch);
  v("has_best", s.has_best);
  v("best_metric", s.best_metric);
  v("best_step", s.best_step);
  v("bad_validations", s.bad_validations);
  v("elapsed_seconds", s.elapsed_seconds);
  v("stalled_validations", s.plateau.stalled_validations);
  v("plateau_scale", s.plateau.scale);
}

torch::Tensor to_tensor(int64_t value) { return torch::tensor(value, torch::kInt64); }
torch::Tensor to_tensor(bool value) { return torch::tensor(int64_t(value), torch::kInt64); }
torch::Tensor to_tensor(double value) { return torch::tensor(value, torch::kFloat64); }
void from_tensor(const torch::Tensor& t, int64_t& value) { value = t.item<int64_t>(); }
void from_tensor(const torch::Tensor& t, bool& value) { value = t.item<int64_t>() != 0; }
void from_tensor(const torch::Tensor& t, double& value) { value = t.item<double>(); }

// Checkpoints written before the fields were stored by name: two tensors, by position.
TrainingState load_positional(torch::serialize::InputArchive& training) {
  torch::Tensor counters, reals;
  training.read("progress", counters);
  training.read("progress_real", reals);
  auto c = counters.accessor<int64_t, 1>();
  auto r = reals.accessor<double, 1>();
  TrainingState s;
  s.step = c[0], s.epoch = c[1], s.batch_in_epoch = c[2], s.has_best = c[3] != 0;
  s.bad_validations = c[4];
  s.best_metric = r[0], s.elapsed_seconds = r[1];
  s.plateau = {r[2], c[5]};
  return s;
}

bool same_tensor(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() && torch::equal(a, b);
}

}  // namespace

RandomStreams RandomStreams::capture(const torch::Device& device) {
  RandomStreams streams;
  auto generator = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(generator.mutex());
    streams.cpu = generator.get_state();
  }
  // On a GPU, dropout draws from the device's own generator: a resume there is exact only
  // with its state too.
  if (device.is_cuda()) {
    auto device_generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(device_generator.mutex());
    streams.device = device_generator.get_state();
  }
  return streams;
}

bool RandomStreams::apply(const torch::Device& device) const {
  auto generator = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(cpu);
  }
  if (!device.is_cuda()) return true;
  // Saved on the CPU and resumed on a GPU: the CPU's stream is what there is.
  if (!this->device.defined()) return false;
  auto device_generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(device_generator.mutex());
  device_generator.set_state(this->device);
  return true;
}

void TrainingState::save(torch::serialize::OutputArchive& training) const {
  torch::serialize::OutputArchive fields;
  visit_fields(*this, [&](const char* name, const auto& field) { fields.write(name, to_tensor(field)); });
  training.write("progress_fields", fields);
  training.write("rng", random.cpu);
  if (random.device.defined()) training.write("cuda_rng", random.device);
}

TrainingState TrainingState::load(torch::serialize::InputArchive& training, const std::string& path) {
  torch::serialize::InputArchive fields;
  TrainingState s;
  if (training.try_read("progress_fields", fields)) {
    visit_fields(s, [&](const char* name, auto& field) {
      torch::Tensor value;
      if (!fields.try_read(name, value))
        throw Error(path + ": the training state lacks \"" + std::string(name) + "\"");
      from_tensor(value, field);
    });
  } else {
    s = load_positional(training);
  }
  if (!training.try_read("rng", s.random.cpu)) throw Error(path + ": the training state lacks its random state \"rng\"");
  training.try_read("cuda_rng", s.random.device);
  return s;
}

std::vector<double> TrainingState::validation_outcome() const {
  return {plateau.scale, static_cast<double>(plateau.stalled_validations)};
}

void TrainingState::take_validation_outcome(const std::vector<double>& values) {
  if (values.size() != 2)
    throw Error("training state: " + std::to_string(values.size()) + " values of a validation's outcome, expected 2");
  plateau = {values[0], static_cast<int64_t>(values[1])};
}

bool TrainingState::operator==(const TrainingState& other) const {
  // Through the one list of fields (as doubles: every counter is far below 2^53).
  std::vector<double> mine, theirs;
  visit_fields(*this, [&](const char*, const auto& field) { mine.push_back(static_cast<double>(field)); });
  visit_fields(other, [&](const char*, const auto& field) { theirs.push_back(static_cast<double>(field)); });
  return mine == theirs && same_tensor(random.cpu, other.random.cpu) && same_tensor(random.device, other.random.device);
}

}  // namespace nmt
