#include "nmt/models/model.h"

#include "nmt/base/error.h"

namespace nmt {

void DecoderState::reorder(const torch::Tensor& index) {
  for (auto& entry : hypothesis) entry.second = entry.second.index_select(0, index);
}

void DecoderState::select(const torch::Tensor& index) {
  reorder(index);
  if (shares_sentence_rows) {
    sentence_rows = sentence_rows.defined() ? sentence_rows.index_select(0, index) : index.clone();
    return;
  }
  for (auto& entry : sentence) entry.second = entry.second.index_select(0, index);
}

void Seq2SeqModel::set_inference_precision(Precision precision) {
  if (precision != Precision::fp32)
    throw Error(precision_name(precision) + " inference is implemented for the transformer family only; "
                "this model decodes in fp32");
}

}  // namespace nmt
