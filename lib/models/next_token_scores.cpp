#include "nmt/models/next_token_scores.h"

#include <torch/torch.h>

namespace nmt {

torch::Tensor NextTokenScores::log_probs() const {
  return normalised_ ? values_ : torch::log_softmax(values_, -1);
}

}  // namespace nmt
