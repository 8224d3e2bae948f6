#include "nmt/text/sentencepiece_ids.h"

#include <cstdint>
#include <map>
#include <optional>

#include "nmt/base/error.h"
#include "nmt/text/tokenizer.h"

namespace nmt {

namespace {

// sentencepiece_model.proto's field numbers and types.
constexpr uint32_t kPiecesField = 1;        // ModelProto.pieces (repeated SentencePiece)
constexpr uint32_t kTrainerSpecField = 2;   // ModelProto.trainer_spec
constexpr uint32_t kPieceText = 1, kPieceScore = 2, kPieceType = 3;
constexpr uint32_t kUnkId = 40, kBosId = 41, kEosId = 42, kPadId = 43;
constexpr uint32_t kUnkPiece = 45, kBosPiece = 46, kEosPiece = 47, kPadPiece = 48;
constexpr int kNormal = 1, kUnknown = 2, kControl = 3;
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

struct Field {
  uint32_t number = 0;
  WireType wire = kVarint;
  uint64_t varint = 0;     // kVarint
  std::string bytes;       // kLengthDelimited; the raw 4 or 8 bytes of fixed fields
};

class WireReader {
 public:
  WireReader(const std::string& bytes, const std::string& origin) : bytes_(bytes), origin_(origin) {}
  bool done() const { return at_ == bytes_.size(); }

  Field next() {
    Field field;
    const auto key = varint();
    field.number = static_cast<uint32_t>(key >> 3);
    field.wire = static_cast<WireType>(key & 7);
    switch (field.wire) {
      case kVarint: field.varint = varint(); break;
      case kFixed64: field.bytes = take(8); break;
      case kFixed32: field.bytes = take(4); break;
      case kLengthDelimited: field.bytes = take(varint()); break;
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

void put_field(std::string& out, const Field& field) {
  put_varint(out, (static_cast<uint64_t>(field.number) << 3) | field.wire);
  if (field.wire == kVarint) {
    put_varint(out, field.varint);
  } else {
    if (field.wire == kLengthDelimited) put_varint(out, field.bytes.size());
    out += field.bytes;
  }
}

Field varint_field(uint32_t number, uint64_t value) {
  Field field;
  field.number = number;
  field.varint = value;
  return field;
}

struct Piece {
  std::string text;
  int type = kNormal;
  std::string raw;  // the SentencePiece message as read (or as made, for an added piece)
};

Piece read_piece(const std::string& raw, const std::string& origin) {
  Piece piece;
  piece.raw = raw;
  WireReader reader(raw, origin);
  while (!reader.done()) {
    const auto field = reader.next();
    if (field.number == kPieceText && field.wire == kLengthDelimited) piece.text = field.bytes;
    if (field.number == kPieceType && field.wire == kVarint) piece.type = static_cast<int>(field.varint);
  }
  return piece;
}

Piece control_piece(const std::string& text) {
  Piece piece{text, kControl, {}};
  Field field;
  field.number = kPieceText;
  field.wire = kLengthDelimited;
  field.bytes = text;
  put_field(piece.raw, field);
  Field score;
  score.number = kPieceScore;
  score.wire = kFixed32;
  score.bytes = std::string(4, '\0');  // 0.0f
  put_field(piece.raw, score);
  put_field(piece.raw, varint_field(kPieceType, kControl));
  return piece;
}

// The special pieces' texts: the trainer spec's, else SentencePiece's defaults.
std::map<uint32_t, std::string> special_texts(const std::string& trainer_spec, const std::string& origin) {
  std::map<uint32_t, std::string> texts{{kUnkPiece, "<unk>"}, {kBosPiece, "<s>"}, {kEosPiece, "</s>"}, {kPadPiece, "<pad>"}};
  WireReader reader(trainer_spec, origin);
  while (!reader.done()) {
    const auto field = reader.next();
    if (texts.count(field.number) && field.wire == kLengthDelimited) texts[field.number] = field.bytes;
  }
  return texts;
}

std::string trainer_spec_with_our_ids(const std::string& trainer_spec, const std::string& origin) {
  std::string out;
  WireReader reader(trainer_spec, origin);
  while (!reader.done()) {
    const auto field = reader.next();
    if (field.number < kUnkId || field.number > kPadId) put_field(out, field);
  }
  put_field(out, varint_field(kUnkId, SpecialIds::kUnk));
  put_field(out, varint_field(kBosId, SpecialIds::kBos));
  put_field(out, varint_field(kEosId, SpecialIds::kEos));
  put_field(out, varint_field(kPadId, SpecialIds::kPad));
  return out;
}

}  // namespace

SentencePieceReordered with_our_special_ids(const std::string& serialized, const std::string& origin) {
  std::vector<Piece> pieces;
  std::vector<Field> others;  // every other top-level field, in order
  std::optional<std::string> trainer_spec;
  WireReader reader(serialized, origin);
  while (!reader.done()) {
    auto field = reader.next();
    if (field.number == kPiecesField && field.wire == kLengthDelimited)
      pieces.push_back(read_piece(field.bytes, origin));
    else if (field.number == kTrainerSpecField && field.wire == kLengthDelimited)
      trainer_spec = field.bytes;
    else
      others.push_back(std::move(field));
  }
  if (pieces.empty()) throw Error("not a SentencePiece model: " + origin + " (no pieces)");
  const auto texts = special_texts(trainer_spec.value_or(""), origin);
  auto find = [&](uint32_t which) -> int {
    for (size_t id = 0; id < pieces.size(); ++id)
      if (pieces[id].text == texts.at(which)) return static_cast<int>(id);
    return -1;
  };
  const int unk = find(kUnkPiece), eos = find(kEosPiece), bos = find(kBosPiece), pad = find(kPadPiece);
  if (unk < 0 || pieces[unk].type != kUnknown)
    throw Error(origin + ": no unknown piece \"" + texts.at(kUnkPiece) + "\"; a SentencePiece model has one");
  if (eos < 0 || pieces[eos].type != kControl)
    throw Error(origin + ": no control piece \"" + texts.at(kEosPiece) + "\" to end sentences with");
  for (const int id : {bos, pad})
    if (id >= 0 && pieces[id].type != kControl)
      throw Error(origin + ": piece \"" + pieces[id].text + "\" is not a control piece, so it cannot be " +
                  (id == bos ? "<s>" : "<pad>"));

  // Our order: pad, unk, bos, eos, then the rest as they were.
  const int added = -1;
  const std::vector<int> specials{pad < 0 ? added : pad, unk, bos < 0 ? added : bos, eos};
  SentencePieceReordered result;
  result.new_id_of.assign(pieces.size(), -1);
  std::vector<Piece> ordered;
  for (size_t slot = 0; slot < specials.size(); ++slot) {
    if (specials[slot] == added) {
      ordered.push_back(control_piece(texts.at(slot == 0 ? kPadPiece : kBosPiece)));
    } else {
      result.new_id_of[specials[slot]] = static_cast<int>(ordered.size());
      ordered.push_back(pieces[specials[slot]]);
    }
  }
  for (size_t id = 0; id < pieces.size(); ++id) {
    if (result.new_id_of[id] >= 0) continue;
    result.new_id_of[id] = static_cast<int>(ordered.size());
    ordered.push_back(pieces[id]);
  }
  for (const auto& piece : ordered) {
    Field field;
    field.number = kPiecesField;
    field.wire = kLengthDelimited;
    field.bytes = piece.raw;
    put_field(result.serialized, field);
  }
  Field spec;
  spec.number = kTrainerSpecField;
  spec.wire = kLengthDelimited;
  spec.bytes = trainer_spec_with_our_ids(trainer_spec.value_or(""), origin);
  put_field(result.serialized, spec);
  for (const auto& field : others) put_field(result.serialized, field);
  result.vocab_size = static_cast<int>(ordered.size());
  return result;
}

}  // namespace nmt
