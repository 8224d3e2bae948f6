// The only translation unit that sees SentencePiece. See spm_backend.h for why.
#include "spm_backend.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <exception>
#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

#define NMT_SPM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using sentencepiece::SentencePieceProcessor;

SentencePieceProcessor* as_processor(void* handle) {
  return static_cast<SentencePieceProcessor*>(handle);
}

void send(nmt_spm_bytes_sink sink, void* context, const std::string& text) {
  sink(context, text.data(), text.size());
}

// Feeds sentences from the caller's callback to the trainer.
class CallbackSentences : public sentencepiece::SentenceIterator {
 public:
  CallbackSentences(nmt_spm_next_sentence next, void* context) : next_(next), context_(context) {
    Next();
  }
  bool done() const override { return done_; }
  void Next() override {
    const char* data = nullptr;
    size_t size = 0;
    done_ = next_(context_, &data, &size) == 0;
    if (!done_) value_.assign(data, size);
  }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  nmt_spm_next_sentence next_;
  void* context_;
  std::string value_;
  bool done_ = false;
};

}  // namespace

NMT_SPM_EXPORT int nmt_spm_abi_version(void) { return NMT_SPM_ABI_VERSION; }

NMT_SPM_EXPORT void nmt_spm_standard_streams(const void** out, const void** err) {
  *out = &std::cout;
  *err = &std::cerr;
}

NMT_SPM_EXPORT void* nmt_spm_load(const char* model, size_t size, nmt_spm_bytes_sink error,
                                  void* context) {
  auto* processor = new SentencePieceProcessor();
  const auto status = processor->LoadFromSerializedProto(std::string(model, size));
  if (!status.ok()) {
    send(error, context, status.ToString());
    delete processor;
    return nullptr;
  }
  return processor;
}

NMT_SPM_EXPORT void nmt_spm_free(void* processor) { delete as_processor(processor); }

NMT_SPM_EXPORT int nmt_spm_piece_count(void* processor) {
  return as_processor(processor)->GetPieceSize();
}

NMT_SPM_EXPORT void nmt_spm_special_ids(void* processor, int ids[4]) {
  const auto* p = as_processor(processor);
  ids[0] = p->pad_id();
  ids[1] = p->unk_id();
  ids[2] = p->bos_id();
  ids[3] = p->eos_id();
}

NMT_SPM_EXPORT void nmt_spm_piece(void* processor, int id, nmt_spm_bytes_sink sink,
                                  void* context) {
  send(sink, context, as_processor(processor)->IdToPiece(id));
}

NMT_SPM_EXPORT float nmt_spm_score(void* processor, int id) {
  return as_processor(processor)->GetScore(id);
}

NMT_SPM_EXPORT int nmt_spm_encode_ids(void* processor, const char* text, size_t size,
                                      nmt_spm_ids_sink sink, nmt_spm_bytes_sink error,
                                      void* context) {
  std::vector<int> ids;
  const auto status = as_processor(processor)->Encode(std::string_view(text, size), &ids);
  if (!status.ok()) {
    send(error, context, status.ToString());
    return 1;
  }
  sink(context, ids.data(), ids.size());
  return 0;
}

NMT_SPM_EXPORT int nmt_spm_encode_pieces(void* processor, const char* text, size_t size,
                                         nmt_spm_bytes_sink sink, nmt_spm_bytes_sink error,
                                         void* context) {
  std::vector<std::string> pieces;
  const auto status = as_processor(processor)->Encode(std::string_view(text, size), &pieces);
  if (!status.ok()) {
    send(error, context, status.ToString());
    return 1;
  }
  for (const auto& piece : pieces) send(sink, context, piece);
  return 0;
}

NMT_SPM_EXPORT int nmt_spm_decode_ids(void* processor, const int* ids, size_t count,
                                      nmt_spm_bytes_sink sink, nmt_spm_bytes_sink error,
                                      void* context) {
  std::string text;
  const auto status = as_processor(processor)->Decode(std::vector<int>(ids, ids + count), &text);
  if (!status.ok()) {
    send(error, context, status.ToString());
    return 1;
  }
  send(sink, context, text);
  return 0;
}

NMT_SPM_EXPORT int nmt_spm_train(const char* const* keys, const char* const* values,
                                 size_t flag_count, nmt_spm_next_sentence next,
                                 nmt_spm_bytes_sink model, nmt_spm_bytes_sink error,
                                 void* context) {
  try {
    std::unordered_map<std::string, std::string> flags;
    for (size_t i = 0; i < flag_count; ++i) flags[keys[i]] = values[i];
    CallbackSentences sentences(next, context);
    std::string serialized;
    const auto status =
        sentencepiece::SentencePieceTrainer::Train(flags, &sentences, &serialized);
    if (!status.ok()) {
      send(error, context, status.ToString());
      return 1;
    }
    send(model, context, serialized);
    return 0;
  } catch (const std::exception& e) {
    send(error, context, e.what());
    return 1;
  }
}
