#include "nmt/models/ensemble.h"

#include <torch/torch.h>

#include <cmath>

#include "nmt/base/error.h"

namespace nmt {
namespace {

// Each member's decoder state, stepped in lockstep: the searches reorder and select them
// together through this one state.
struct EnsembleState : DecoderState {
  std::vector<DecoderStatePtr> members;

  void reorder(const torch::Tensor& index) override {
    for (auto& member : members) member->reorder(index);
  }
  void select(const torch::Tensor& index) override {
    for (auto& member : members) member->select(index);
  }
  DecoderStatePtr clone() const override {
    auto copy = std::make_unique<EnsembleState>();
    copy->step = step;
    copy->want_attention = want_attention;
    for (const auto& member : members) copy->members.push_back(member->clone());
    return copy;
  }
};

// log of the mean of the probabilities: logsumexp over members minus log N.
torch::Tensor mixture_log_probs(const std::vector<torch::Tensor>& log_probs) {
  return torch::logsumexp(torch::stack(log_probs, 0), 0) - std::log(static_cast<double>(log_probs.size()));
}

}  // namespace

EnsembleModel::EnsembleModel(std::vector<ModelPtr> members) : members_(std::move(members)) {
  if (members_.size() < 2) throw Error("an ensemble needs at least two models");
  for (size_t i = 0; i < members_.size(); ++i) register_module("member" + std::to_string(i), members_[i]);
}

EncoderOutput EnsembleModel::encode(const torch::Tensor& source) {
  EncoderOutput packed;
  for (auto& member : members_) packed.members.push_back(member->encode(source));
  // The searches read only the mask (and the first member's memory, as any model's).
  packed.memory = packed.members.front().memory;
  packed.source_mask = packed.members.front().source_mask;
  return packed;
}

DecoderStatePtr EnsembleModel::initial_state(const EncoderOutput& encoded) {
  if (encoded.members.size() != members_.size())
    throw Error("ensemble: an encoder output of " + std::to_string(encoded.members.size()) + " members for " +
                std::to_string(members_.size()));
  auto state = std::make_unique<EnsembleState>();
  for (size_t i = 0; i < members_.size(); ++i) state->members.push_back(members_[i]->initial_state(encoded.members[i]));
  return state;
}

StepOutput EnsembleModel::step(const torch::Tensor& previous_tokens, DecoderState& base) {
  auto& state = state_as<EnsembleState>(base);
  std::vector<torch::Tensor> log_probs;
  StepOutput first;
  for (size_t i = 0; i < members_.size(); ++i) {
    state.members[i]->want_attention = i == 0 && state.want_attention;  // only the first's is used
    auto out = members_[i]->step(previous_tokens, *state.members[i]);
    log_probs.push_back(out.scores.log_probs());
    if (i == 0) first = std::move(out);
  }
  first.scores = NextTokenScores::log_probs(mixture_log_probs(log_probs));
  ++state.step;
  return first;
}

ForwardOutput EnsembleModel::forward(const torch::Tensor& source, const torch::Tensor& target_input) {
  std::vector<torch::Tensor> log_probs;
  for (auto& member : members_) log_probs.push_back(torch::log_softmax(member->forward(source, target_input).logits, -1));
  return {mixture_log_probs(log_probs)};  // normalised already: log_softmax leaves them as they are
}

int64_t EnsembleModel::max_positions() const {
  int64_t limit = 0;
  for (const auto& member : members_) {
    const auto own = member->max_positions();
    if (own > 0) limit = limit == 0 ? own : std::min(limit, own);
  }
  return limit;
}

void EnsembleModel::use_linear_path(LinearPath path) {
  for (auto& member : members_) member->use_linear_path(path);
  Seq2SeqModel::use_linear_path(path);
}

std::vector<LayerComputation> EnsembleModel::layer_computations() const {
  std::vector<LayerComputation> all;
  for (size_t i = 0; i < members_.size(); ++i)
    for (auto computation : members_[i]->layer_computations()) {
      computation.layers = "member " + std::to_string(i + 1) + ": " + computation.layers;
      all.push_back(std::move(computation));
    }
  return all;
}

LoadedModel load_ensemble(const std::vector<std::string>& paths, const torch::Device& device) {
  if (paths.empty()) throw Error("no model to load");
  auto first = load_model(paths.front(), device);
  if (paths.size() == 1) return first;
  std::vector<ModelPtr> members{first.model};
  for (size_t i = 1; i < paths.size(); ++i) {
    auto member = load_model(paths[i], device);
    for (const auto& [mine, theirs, side] :
         {std::tuple{&member.source_tokenizer, &first.source_tokenizer, "source"},
          std::tuple{&member.target_tokenizer, &first.target_tokenizer, "target"}})
      if (mine->serialized() != theirs->serialized())
        throw Error("ensemble: the " + std::string(side) + " tokenizer of " + paths[i] + " differs from " +
                    paths.front() + "'s; the models of an ensemble must share their tokenizers");
    members.push_back(member.model);
    first.unsealed.insert(first.unsealed.end(), member.unsealed.begin(), member.unsealed.end());
  }
  auto ensemble = std::make_shared<EnsembleModel>(std::move(members));
  ensemble->eval();
  first.model = ensemble;
  return first;
}

}  // namespace nmt
