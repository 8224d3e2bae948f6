#include "nmt/text/sentencepiece_ids.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "nmt/base/error.h"
#include "nmt/text/tokenizer.h"

namespace nmt {

namespace {

// sentencepiece_model.proto's field numbers and types.
constexpr uint32_t kModelPiecesField = 1;        // ModelProto.pieces (repeated SentencePiece)
constexpr uint32_t kModelTrainerSpecField = 2;   // ModelProto.trainer_spec
constexpr uint32_t kPieceText = 1, kPieceScore = 2, kPieceType = 3;
constexpr uint32_t kSpecUnkId = 40, kSpecBosId = 41, kSpecEosId = 42, kSpecPadId = 43;
constexpr uint32_t kSpecUnkPiece = 45, kSpecBosPiece = 46, kSpecEosPiece = 47, kSpecPadPiece = 48;
constexpr int kPieceNormal = 1, kPieceUnknown = 2, kPieceControl = 3, kPieceUnused = 5;
enum ProtoWireType : uint32_t { kWireVarint = 0, kWireFixed64 = 1, kWireLengthDelimited = 2, kWireFixed32 = 5 };

struct WireField {
  uint32_t number = 0;
  ProtoWireType wire = kWireVarint;
  uint64_t varint = 0;     // kWireVarint
  std::string bytes;       // kWireLengthDelimited; the raw 4 or 8 bytes of fixed fields
};

class WireReader {
 public:
  WireReader(const std::string& bytes, const std::string& origin) : bytes_(bytes), origin_(origin) {}
  bool done() const { return at_ == bytes_.size(); }

  WireField next() {
    WireField field;
    const auto key = varint();
    field.number = static_cast<uint32_t>(key >> 3);
    field.wire = static_cast<ProtoWireType>(key & 7);
    switch (field.wire) {
      case kWireVarint: field.varint = varint(); break;
      case kWireFixed64: field.bytes = take(8); break;
      case kWireFixed32: field.bytes = take(4); break;
      case kWireLengthDelimited: field.bytes = take(varint()); break;
      default: fail("wire type " + std::to_string(key & 7));
    }
    if (field.number == 0) fail("field number 0");
    return field;
  }

 private:
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= bytes_.size()) fail("a number cut short");
      const auto byte = static_cast<uint8_t>(bytes_[at_++]);
      value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    fail("a number longer than 10 bytes");
    return 0;
  }
  std::string take(uint64_t length) {
    if (length > bytes_.size() - at_) fail("a field runs past the end");
    at_ += length;
    return bytes_.substr(at_ - length, length);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("not a SentencePiece model: " + origin_ + " (" + what + " at byte " + std::to_string(at_) + ")");
  }

  const std::string& bytes_;
  const std::string& origin_;
  size_t at_ = 0;
};

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_field(std::string& out, const WireField& field) {
  put_varint(out, (static_cast<uint64_t>(field.number) << 3) | field.wire);
  if (field.wire == kWireVarint) {
    put_varint(out, field.varint);
  } else {
    if (field.wire == kWireLengthDelimited) put_varint(out, field.bytes.size());
    out += field.bytes;
  }
}

WireField varint_field(uint32_t number, uint64_t value) {
  WireField field;
  field.number = number;
  field.varint = value;
  return field;
}

struct ModelPiece {
  std::string text;
  int type = kPieceNormal;
  std::string raw;  // the SentencePiece message as read (or as made, for an added piece)
};

ModelPiece read_piece(const std::string& raw, const std::string& origin) {
  ModelPiece piece;
  piece.raw = raw;
  WireReader reader(raw, origin);
  while (!reader.done()) {
    const auto field = reader.next();
    if (field.number == kPieceText && field.wire == kWireLengthDelimited) piece.text = field.bytes;
    if (field.number == kPieceType && field.wire == kWireVarint) piece.type = static_cast<int>(field.varint);
  }
  return piece;
}

ModelPiece new_model_piece(const std::string& text, int type) {
  ModelPiece piece{text, type, {}};
  WireField field;
  field.number = kPieceText;
  field.wire = kWireLengthDelimited;
  field.bytes = text;
  put_field(piece.raw, field);
  WireField score;
  score.number = kPieceScore;
  score.wire = kWireFixed32;
  score.bytes = std::string(4, '\0');  // 0.0f
  put_field(piece.raw, score);
  put_field(piece.raw, varint_field(kPieceType, static_cast<uint64_t>(type)));
  return piece;
}

// `piece` with its type set to unused (its other fields as they were).
ModelPiece as_unused(const ModelPiece& piece, const std::string& origin) {
  ModelPiece result{piece.text, kPieceUnused, {}};
  WireReader reader(piece.raw, origin);
  while (!reader.done()) {
    const auto field = reader.next();
    if (field.number != kPieceType) put_field(result.raw, field);
  }
  put_field(result.raw, varint_field(kPieceType, kPieceUnused));
  return result;
}

// The special pieces' texts: the trainer spec's, else SentencePiece's defaults.
std::map<uint32_t, std::string> special_piece_texts(const std::string& trainer_spec, const std::string& origin) {
  std::map<uint32_t, std::string> texts{{kSpecUnkPiece, "<unk>"}, {kSpecBosPiece, "<s>"}, {kSpecEosPiece, "</s>"}, {kSpecPadPiece, "<pad>"}};
  WireReader reader(trainer_spec, origin);
  while (!reader.done()) {
    const auto field = reader.next();
    if (texts.count(field.number) && field.wire == kWireLengthDelimited) texts[field.number] = field.bytes;
  }
  return texts;
}

std::string trainer_spec_with_our_ids(const std::string& trainer_spec, const std::string& origin) {
  std::string out;
  WireReader reader(trainer_spec, origin);
  while (!reader.done()) {
    const auto field = reader.next();
    if (field.number < kSpecUnkId || field.number > kSpecPadId) put_field(out, field);
  }
  put_field(out, varint_field(kSpecUnkId, SpecialIds::kUnk));
  put_field(out, varint_field(kSpecBosId, SpecialIds::kBos));
  put_field(out, varint_field(kSpecEosId, SpecialIds::kEos));
  put_field(out, varint_field(kSpecPadId, SpecialIds::kPad));
  return out;
}

}  // namespace

namespace {

struct ParsedSentencePiece {
  std::vector<ModelPiece> pieces;
  std::vector<WireField> others;  // every other top-level field, in order
  std::string trainer_spec;
  std::map<uint32_t, std::string> special_piece_texts;
  int unk = -1, eos = -1, bos = -1, pad = -1;  // ids of the special pieces, -1 where absent
};

ParsedSentencePiece parse_sentencepiece_model(const std::string& serialized, const std::string& origin) {
  ParsedSentencePiece model;
  WireReader reader(serialized, origin);
  while (!reader.done()) {
    auto field = reader.next();
    if (field.number == kModelPiecesField && field.wire == kWireLengthDelimited)
      model.pieces.push_back(read_piece(field.bytes, origin));
    else if (field.number == kModelTrainerSpecField && field.wire == kWireLengthDelimited)
      model.trainer_spec = field.bytes;
    else
      model.others.push_back(std::move(field));
  }
  if (model.pieces.empty()) throw Error("not a SentencePiece model: " + origin + " (no pieces)");
  model.special_piece_texts = special_piece_texts(model.trainer_spec, origin);
  // SentencePiece itself refuses a model with a piece twice; special pieces must differ too.
  std::set<std::string> texts;
  for (const auto& piece : model.pieces)
    if (!texts.insert(piece.text).second) throw Error(origin + ": piece \"" + piece.text + "\" twice");
  std::set<std::string> specials;
  for (const auto& [field, text] : model.special_piece_texts)
    if (!specials.insert(text).second) throw Error(origin + ": two special pieces are both \"" + text + "\"");
  auto find = [&](uint32_t which) -> int {
    for (size_t id = 0; id < model.pieces.size(); ++id)
      if (model.pieces[id].text == model.special_piece_texts.at(which)) return static_cast<int>(id);
    return -1;
  };
  model.unk = find(kSpecUnkPiece), model.eos = find(kSpecEosPiece), model.bos = find(kSpecBosPiece), model.pad = find(kSpecPadPiece);
  if (model.unk < 0 || model.pieces[model.unk].type != kPieceUnknown)
    throw Error(origin + ": no unknown piece \"" + model.special_piece_texts.at(kSpecUnkPiece) + "\"; a SentencePiece model has one");
  if (model.eos < 0 || model.pieces[model.eos].type != kPieceControl)
    throw Error(origin + ": no control piece \"" + model.special_piece_texts.at(kSpecEosPiece) + "\" to end sentences with");
  for (const int id : {model.bos, model.pad})
    if (id >= 0 && model.pieces[id].type != kPieceControl)
      throw Error(origin + ": piece \"" + model.pieces[id].text + "\" is not a control piece, so it cannot be " +
                  (id == model.bos ? "<s>" : "<pad>"));
  return model;
}

// pad, unk, bos, eos: the model's, or new control pieces.
std::vector<ModelPiece> our_special_pieces(const ParsedSentencePiece& model) {
  return {model.pad >= 0 ? model.pieces[model.pad] : new_model_piece(model.special_piece_texts.at(kSpecPadPiece), kPieceControl),
          model.pieces[model.unk],
          model.bos >= 0 ? model.pieces[model.bos] : new_model_piece(model.special_piece_texts.at(kSpecBosPiece), kPieceControl),
          model.pieces[model.eos]};
}

std::string serialized_sentencepiece(const ParsedSentencePiece& model, const std::vector<ModelPiece>& ordered, const std::string& origin) {
  std::string out;
  for (const auto& piece : ordered) {
    WireField field;
    field.number = kModelPiecesField;
    field.wire = kWireLengthDelimited;
    field.bytes = piece.raw;
    put_field(out, field);
  }
  WireField spec;
  spec.number = kModelTrainerSpecField;
  spec.wire = kWireLengthDelimited;
  spec.bytes = trainer_spec_with_our_ids(model.trainer_spec, origin);
  put_field(out, spec);
  for (const auto& field : model.others) put_field(out, field);
  return out;
}

}  // namespace

SentencePieceReordered with_our_special_ids(const std::string& serialized, const std::string& origin) {
  const auto model = parse_sentencepiece_model(serialized, origin);
  std::vector<std::string> order;
  for (const auto& piece : model.pieces) order.push_back(piece.text);
  return with_our_special_ids(serialized, origin, order);
}

SentencePieceReordered with_our_special_ids(const std::string& serialized, const std::string& origin,
                                            const std::vector<std::string>& order) {
  const auto model = parse_sentencepiece_model(serialized, origin);
  auto ordered = our_special_pieces(model);
  std::map<std::string, int> new_id;  // by text
  for (size_t i = 0; i < ordered.size(); ++i) new_id[ordered[i].text] = static_cast<int>(i);
  std::map<std::string, int> model_id;
  for (size_t id = 0; id < model.pieces.size(); ++id) model_id.emplace(model.pieces[id].text, static_cast<int>(id));
  SentencePieceReordered result;
  for (const auto& text : order) {
    if (!new_id.count(text)) {
      const auto found = model_id.find(text);
      new_id[text] = static_cast<int>(ordered.size());
      ordered.push_back(found != model_id.end() ? model.pieces[found->second] : new_model_piece(text, kPieceUnused));
    }
    result.new_id_of.push_back(new_id.at(text));
  }
  for (const auto& piece : model.pieces) {
    if (new_id.count(piece.text)) continue;
    new_id[piece.text] = static_cast<int>(ordered.size());
    ordered.push_back(as_unused(piece, origin));
    ++result.unlisted;
  }
  result.serialized = serialized_sentencepiece(model, ordered, origin);
  result.vocab_size = static_cast<int>(ordered.size());
  return result;
}

}  // namespace nmt
