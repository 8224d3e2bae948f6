#include "nmt/models/model.h"

#include "nmt/base/error.h"

namespace nmt {

void throw_wrong_state() {
  throw Error("decoder state of another model family passed to step()");
}

void Seq2SeqModel::set_inference_precision(Precision precision) {
  if (precision != Precision::fp32)
    throw Error(precision_name(precision) + " inference is implemented for the transformer family only; "
                "this model decodes in fp32");
}

}  // namespace nmt
