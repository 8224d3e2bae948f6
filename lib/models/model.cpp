#include "nmt/models/model.h"

namespace nmt {

void DecoderState::reorder(const torch::Tensor& index) {
  for (auto& entry : hypothesis) entry.second = entry.second.index_select(0, index);
}

void DecoderState::select(const torch::Tensor& index) {
  reorder(index);
  for (auto& entry : sentence) entry.second = entry.second.index_select(0, index);
}

}  // namespace nmt
