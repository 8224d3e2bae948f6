#include "overlapped_sum.h"

#include <cmath>

#include "nmt/training/gradient_buckets.h"

namespace nmt::training_run {

double fp16_wire_scale(double previous_max_magnitude) {
  if (!(previous_max_magnitude > 0) || !std::isfinite(previous_max_magnitude)) return 0;
  int exponent = 0;
  std::frexp(previous_max_magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  return std::ldexp(1.0, 12 - exponent);
}

OverlappedGradientSum::OverlappedGradientSum(ProcessGroup& group, std::vector<torch::Tensor> parameters,
                                             int64_t bucket_bytes, GradientWire wire)
    : group_(group),
      wire_(wire),
      bucket_bytes_(bucket_bytes),
      parameters_(std::move(parameters)),
      bucket_of_(parameters_.size()),
      slot_in_bucket_(parameters_.size()),
      arrived_(parameters_.size(), false) {
  // Until backward has shown its order: the reverse of registration (mostly what it reaches first).
  build_buckets(backward_order(std::vector<int64_t>(parameters_.size(), -1)));
  for (size_t k = 0; k < parameters_.size(); ++k)
    hooks_.push_back(parameters_[k].register_hook([this, k](torch::Tensor gradient) { on_gradient(k, gradient); }));
}

void OverlappedGradientSum::build_buckets(const std::vector<size_t>& order) {
  std::vector<int64_t> bytes;
  std::vector<int> types;
  for (const auto& p : parameters_) {
    bytes.push_back(p.numel() * static_cast<int64_t>(p.element_size()));
    types.push_back(static_cast<int>(p.scalar_type()));
  }
  buckets_.clear();
  for (const auto& members : gradient_buckets(order, bytes, types, bucket_bytes_)) {
    auto& bucket = buckets_.emplace_back();
    for (const size_t k : members) {
      bucket_of_[k] = buckets_.size() - 1;
      slot_in_bucket_[k] = bucket.parameters.size();
      bucket.offsets.push_back(bucket.parameters.empty() ? 0
                                                         : bucket.offsets.back() + parameters_[bucket.parameters.back()].numel());
      bucket.parameters.push_back(k);
    }
  }
}

// After the first update: buckets in the order its backward reached the parameters, rank 0's
// (every rank must build the same buckets; the same model and code give the same order).
void OverlappedGradientSum::learn_backward_order() {
  std::vector<int64_t> arrival(parameters_.size(), -1);
  for (size_t i = 0; i < arrivals_.size(); ++i) arrival[arrivals_[i]] = static_cast<int64_t>(i);
  auto shared = torch::tensor(arrival, torch::kLong).to(group_.device());
  group_.broadcast({shared});
  shared = shared.cpu();
  build_buckets(backward_order(std::vector<int64_t>(shared.data_ptr<int64_t>(),
                                                    shared.data_ptr<int64_t>() + shared.numel())));
  arrivals_.clear();
  order_learned_ = true;
}

OverlappedGradientSum::~OverlappedGradientSum() {
  for (size_t k = 0; k < hooks_.size(); ++k) parameters_[k].remove_hook(hooks_[k]);
}

void OverlappedGradientSum::arm() {
  for (auto& bucket : buckets_) {
    const auto& first = parameters_[bucket.parameters.front()];
    const auto elements = bucket.offsets.back() + parameters_[bucket.parameters.back()].numel();
    bucket.flat = torch::empty({elements}, first.options());
    bucket.ready = 0;
    bucket.wait = nullptr;
  }
  std::fill(arrived_.begin(), arrived_.end(), false);
  arrivals_.clear();
  next_to_start_ = 0;
  armed_ = true;
}

// Runs inside backward, before the gradient is added to .grad: what .grad will hold is
// what it holds now (earlier micro-batches) plus this.
void OverlappedGradientSum::on_gradient(size_t k, const torch::Tensor& gradient) {
  if (!armed_ || arrived_[k]) return;
  if (!order_learned_) arrivals_.push_back(k);
  torch::NoGradGuard no_grad;
  auto& bucket = buckets_[bucket_of_[k]];
  auto slot = bucket.flat.narrow(0, bucket.offsets[slot_in_bucket_[k]], parameters_[k].numel());
  const auto& accumulated = parameters_[k].grad();
  if (accumulated.defined()) slot.copy_((accumulated + gradient).reshape({-1}));
  else slot.copy_(gradient.reshape({-1}));
  arrived_[k] = true;
  if (++bucket.ready == bucket.parameters.size()) start_ready_buckets();
}

void OverlappedGradientSum::start_ready_buckets() {
  while (next_to_start_ < buckets_.size() && buckets_[next_to_start_].ready == buckets_[next_to_start_].parameters.size())
    start(buckets_[next_to_start_++]);
}

void OverlappedGradientSum::start(Bucket& bucket) {
  if (bucket.wire_scale > 0) {
    bucket.on_wire = (bucket.flat * bucket.wire_scale).to(torch::kHalf);
    bucket.wait = group_.start_sum(bucket.on_wire);
  } else {
    bucket.wait = group_.start_sum(bucket.flat);
  }
}

void OverlappedGradientSum::complete(Bucket& bucket) {
  bucket.wait();
  if (bucket.on_wire.defined()) {
    // Every rank holds the same fp16 sum, so all of them take the same branch here.
    if (torch::isfinite(bucket.on_wire).all().item<bool>()) bucket.flat.copy_(bucket.on_wire).div_(bucket.wire_scale);
    else group_.start_sum(bucket.flat)();  // overflowed: the exact sum of what each rank kept
    bucket.on_wire = torch::Tensor();
  }
  const bool scalable = wire_ == GradientWire::fp16 && bucket.flat.scalar_type() == torch::kFloat;
  bucket.wire_scale = scalable ? fp16_wire_scale(bucket.flat.abs().max().item<double>()) : 0;
}

void OverlappedGradientSum::finish() {
  if (!armed_) arm();  // no batch on this rank in this update: it sends what it has
  torch::NoGradGuard no_grad;
  for (; next_to_start_ < buckets_.size(); ++next_to_start_) {
    auto& bucket = buckets_[next_to_start_];
    for (size_t slot = 0; slot < bucket.parameters.size(); ++slot) {
      const size_t k = bucket.parameters[slot];
      if (arrived_[k]) continue;
      auto place = bucket.flat.narrow(0, bucket.offsets[slot], parameters_[k].numel());
      const auto& accumulated = parameters_[k].grad();
      if (accumulated.defined()) place.copy_(accumulated.reshape({-1}));
      else place.zero_();
    }
    start(bucket);
  }
  armed_ = false;
  for (auto& bucket : buckets_) {
    complete(bucket);
    for (size_t slot = 0; slot < bucket.parameters.size(); ++slot) {
      auto& parameter = parameters_[bucket.parameters[slot]];
      const auto sum = bucket.flat.narrow(0, bucket.offsets[slot], parameter.numel()).view_as(parameter);
      if (parameter.grad().defined()) parameter.mutable_grad().copy_(sum);
      else parameter.mutable_grad() = sum.clone();
    }
    bucket.flat = torch::Tensor();
  }
  if (!order_learned_) learn_backward_order();
}

}  // namespace nmt::training_run
