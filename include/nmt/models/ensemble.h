#pragma once
// Several models decoding as one (nmt-translate --model A --model B ...). Each member
// encodes the source and steps its own state; per step their distributions are averaged
// as probabilities, log((p_1 + ... + p_N) / N), as fairseq does. Why not Marian's weighted
// sum of log-probs: that is a product of experts whose scores are not normalised, while a
// mixture is a distribution, so hypothesis scores stay log-probabilities comparable with a
// single model's, length penalties mean the same, and sampling draws from the mixture.
// An ensemble of N copies of one model gives that model's output and scores.
// Attention (export, alignments, coverage) is the first member's; self-attention too.
#include <string>
#include <vector>

#include "nmt/models/checkpoint.h"
#include "nmt/models/model.h"

namespace nmt {

class EnsembleModel : public Seq2SeqModel {
 public:
  /// At least two members (nmt::Error), sharing their tokenizers (load_ensemble checks).
  explicit EnsembleModel(std::vector<ModelPtr> members);

  EncoderOutput encode(const torch::Tensor& source) override;
  DecoderStatePtr initial_state(const EncoderOutput& encoded) override;
  StepOutput step(const torch::Tensor& previous_tokens, DecoderState& state) override;
  ForwardOutput forward(const torch::Tensor& source, const torch::Tensor& target_input) override;
  bool has_attention() const override { return members_.front()->has_attention(); }
  int64_t attention_layers() const override { return members_.front()->attention_layers(); }
  int64_t alignment_layer() const override { return members_.front()->alignment_layer(); }
  bool has_self_attention() const override { return members_.front()->has_self_attention(); }
  /// The smallest limit among the members (0 = none of them has one).
  int64_t max_positions() const override;
  SelfAttentionWeights self_attention(const torch::Tensor& source, const torch::Tensor& target_input) override {
    return members_.front()->self_attention(source, target_input);
  }
  /// Every member takes `path` (each converts its own weights), then the ensemble records it.
  void use_linear_path(LinearPath path) override;
  std::vector<LayerComputation> layer_computations() const override;

  size_t size() const { return members_.size(); }

 protected:
  bool runs_linear_path(LinearPath) const override { return true; }  // the members decide, in use_linear_path
  std::vector<LinearImpl*> linear_layers() override { return {}; }  // the members' layers are theirs to convert

 private:
  std::vector<ModelPtr> members_;
};

/// The models at `paths` as one: the model itself for one path, an EnsembleModel for more,
/// with the first's config and tokenizers. Every member must have the first's source and
/// target tokenizers (nmt::Error naming the file that differs), so one tokenization serves all.
LoadedModel load_ensemble(const std::vector<std::string>& paths, const torch::Device& device = torch::kCPU);

}  // namespace nmt
