#pragma once
// Which parameters' gradients travel together in one all-reduce, and in what order
// (lib/training's overlapped sum starts a bucket as soon as backward has produced all of its
// gradients, and strictly in bucket order). Pure functions, so that the order is tested
// apart from any collective.
//
// Registration order is not backward's: the Transformer registers the encoder's final norm
// after the decoder's layers, though backward reaches it only once every decoder layer is
// done, and a bucket waiting on it holds back every bucket after it. So the first update's
// buckets follow reverse registration order, and from then on the order backward reached
// the parameters in that update (as DDP rebuilds its buckets after the first iteration).
#include <cstdint>
#include <vector>

namespace nmt {

/// The parameters' indices in the order backward reached them: by `arrival` (the position at
/// which each parameter's gradient arrived; -1 where it did not), those that did not arrive
/// after the others, the last registered first.
std::vector<size_t> backward_order(const std::vector<int64_t>& arrival);

/// `order` cut into buckets of about `bucket_bytes` (a parameter larger than that alone), a
/// new bucket wherever the element type changes (`type`: any id per parameter).
std::vector<std::vector<size_t>> gradient_buckets(const std::vector<size_t>& order, const std::vector<int64_t>& bytes,
                                                  const std::vector<int>& type, int64_t bucket_bytes);

}  // namespace nmt
