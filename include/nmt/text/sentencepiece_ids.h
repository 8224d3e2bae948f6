#pragma once
// A SentencePiece model given our fixed special ids (SpecialIds: pad 0, unk 1, bos 2, eos 3),
// for tokenizers trained elsewhere: Marian's put </s> at 0 and <unk> at 1 and have no <pad>
// or <s>. The serialized ModelProto is rewritten at the protobuf wire level: its pieces in a
// new order (missing <pad> and <s> added as control pieces), the trainer spec's four ids set
// to ours, every other field kept byte for byte. By hand because Debian ships neither
// SentencePiece's .proto nor its generated header, and the wire format needs only varints and
// length-delimited fields. Segmentation does not change: it follows the pieces' scores and
// types, not their ids. Torch-free.
#include <string>
#include <vector>

namespace nmt {

struct SentencePieceReordered {
  std::string serialized;        ///< the model with our special ids
  std::vector<int> new_id_of;    ///< per id of the original model (or of the given order), its id now
  int vocab_size = 0;            ///< pieces now (the original's, plus <pad> and <s> where missing)
  int unlisted = 0;              ///< with an order: pieces of the model it does not list
};

/// `serialized` (a SentencePiece .model, named `origin` in errors) with <pad>, <unk>, <s>, </s>
/// at 0..3 and every other piece after them in its original order. Throws nmt::Error naming
/// `origin` for bytes that are not a ModelProto, a model without <unk> or </s>, or special
/// pieces of the wrong type.
SentencePieceReordered with_our_special_ids(const std::string& serialized, const std::string& origin);

/// The same with the ids of `order` (piece texts by id, e.g. a Marian vocab.yml's), not the
/// model's own: after pad, unk, bos, eos come the listed pieces in their order. A listed
/// piece the model lacks is added as an unused piece (never produced by segmentation, as
/// for a joint vocabulary's pieces of the other language); a piece of the model the order
/// does not list becomes unused and goes last (segmentation then splits it into pieces
/// listed, where Marian would read <unk>; `unlisted` counts them).
SentencePieceReordered with_our_special_ids(const std::string& serialized, const std::string& origin,
                                            const std::vector<std::string>& order);

}  // namespace nmt
