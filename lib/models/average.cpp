#include "nmt/models/average.h"

#include <torch/torch.h>

#include "nmt/base/error.h"

namespace nmt {
namespace {

// Tensors by name: parameters and buffers (the Transformer's position table is a buffer).
std::vector<std::pair<std::string, torch::Tensor>> named_tensors(Seq2SeqModel& model) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : model.named_parameters()) out.emplace_back(item.key(), item.value());
  for (const auto& item : model.named_buffers()) out.emplace_back(item.key(), item.value());
  return out;
}

void require_same_model(const LoadedModel& first, const LoadedModel& other, const std::string& first_path,
                        const std::string& path) {
  const auto a = config_to_json(first.config)["model"], b = config_to_json(other.config)["model"];
  if (a != b)
    throw Error("cannot average " + path + " with " + first_path + ": their model configs differ (" + b.dump() +
                " vs " + a.dump() + ")");
  if (first.source_tokenizer.serialized() != other.source_tokenizer.serialized() ||
      first.target_tokenizer.serialized() != other.target_tokenizer.serialized())
    throw Error("cannot average " + path + " with " + first_path + ": their tokenizers differ");
}

}  // namespace

LoadedModel average_checkpoints(const std::vector<std::string>& paths) {
  if (paths.empty()) throw Error("no checkpoints to average");
  torch::NoGradGuard no_grad;
  auto result = load_model(paths.front());
  std::vector<torch::Tensor> sums;
  for (const auto& [name, tensor] : named_tensors(*result.model)) sums.push_back(tensor.to(torch::kFloat64));
  for (size_t i = 1; i < paths.size(); ++i) {
    auto other = load_model(paths[i]);
    require_same_model(result, other, paths.front(), paths[i]);
    const auto tensors = named_tensors(*other.model);
    for (size_t t = 0; t < tensors.size(); ++t) sums[t].add_(tensors[t].second.to(torch::kFloat64));
    if (i + 1 == paths.size()) result.config = other.config, result.step = other.step;
  }
  const auto count = static_cast<double>(paths.size());
  auto targets = named_tensors(*result.model);
  for (size_t t = 0; t < targets.size(); ++t) targets[t].second.copy_(sums[t].div_(count));
  return result;
}

void write_average(const std::vector<std::string>& paths, const std::string& output) {
  auto averaged = average_checkpoints(paths);
  save_checkpoint(output, averaged.config, *averaged.model, averaged.source_tokenizer, averaged.target_tokenizer,
                  nullptr, averaged.step, averaged.source_piece_counts);
}

}  // namespace nmt
