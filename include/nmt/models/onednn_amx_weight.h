#pragma once
// A bf16 or int8 Linear weight packed once for oneDNN's matmul primitive, for inference on
// CPUs where oneDNN runs that primitive on AMX (the tile instructions of Intel's Sapphire
// Rapids and later). Otherwise the int8 path calls oneDNN's u8s8s32 GEMM function, which
// never uses AMX and repacks the weight at every call, and the bf16 path LibTorch's linear
// (a oneDNN matmul over the plain weights). The matmul primitive reaches AMX only with the
// row count fixed when it is made (oneDNN 2.6 runs one with run-time rows on its AVX-512 GEMM). Measured on a Sapphire Rapids at the shared
// model's shapes, 5 to 1,024 rows (bench/RESULTS.md, 2026-12-08): the packed int8 product
// took 0.06-0.35x the time of the u8s8s32 GEMM function; the packed bf16 one 0.2-0.9x that
// of a bf16 matmul over the plain weights, which also reaches AMX.
// So each row count gets a primitive of its own, made on first use (about 0.25 ms) and
// kept: exactly up to 64 rows (a decoder step's beam and batch), rounded up beyond that
// to a multiple of 16 up to 1,024 and of 256 above (an encoder's tokens), the extra rows
// zero and their results dropped. oneDNN chooses the same packed layout at every row count,
// so one packed copy serves them all (each primitive is made for that layout; one that
// only oneDNN's reference code would run is an error).
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace nmt {

namespace onednn {
class Primitive;
}

/// The two products that go through a packed AMX weight.
enum class AmxProduct {
  bf16,  ///< bf16 inputs x bf16 weights -> fp32, plus an fp32 bias
  int8,  ///< u8 inputs x s8 weights -> int32 sums (int8_linear.h scales them back)
};

/// The implementation oneDNN chooses for `product` at 16 rows ("brg:avx512_core_amx_int8"),
/// probed once; "" where the primitive API is missing or refuses.
const std::string& amx_probe(AmxProduct product);

/// Whether products of that kind go through OnednnAmxWeight: oneDNN runs them on AMX
/// (amx_probe names it) and NMT_AMX is not "off" (read once; "off" keeps the GEMM
/// functions, as on CPUs without AMX).
bool onednn_amx_enabled(AmxProduct product);

/// The rows a product of `rows` rows computes (the primitive's row count): the header says how.
int64_t amx_rows_computed(int64_t rows);

class OnednnAmxWeight {
 public:
  /// Packs `weight` [out, in] on the CPU (bf16 for AmxProduct::bf16, int8 values for
  /// AmxProduct::int8) and, for bf16, keeps `bias` ([out], any float type, or undefined)
  /// as fp32. nmt::Error where oneDNN refuses.
  OnednnAmxWeight(AmxProduct product, const torch::Tensor& weight, const torch::Tensor& bias = {});
  ~OnednnAmxWeight();
  OnednnAmxWeight(const OnednnAmxWeight&) = delete;
  OnednnAmxWeight& operator=(const OnednnAmxWeight&) = delete;

  /// bf16: x [rows, in] of any float type (converted to bf16) -> fp32 [rows, out] with
  /// the bias added. int8: x [rows, in] u8 -> the int32 sums [rows, out]. Any rows, 0
  /// included. Not differentiable.
  torch::Tensor apply(const torch::Tensor& x) const;

  /// oneDNN's name for what runs at 16 rows ("brg:avx512_core_amx_bf16"), for --verbose.
  const std::string& implementation() const { return implementation_; }

  /// How many primitives were made so far (one per row count met), for tests.
  size_t primitives_made() const;

 private:
  struct Handles;  // oneDNN's objects, destroyed with this
  const onednn::Primitive& matmul_for(int64_t rows) const;

  AmxProduct product_;
  int64_t in_, out_;
  torch::Tensor bias_;  // fp32 (bf16 with a bias)
  std::unique_ptr<Handles> onednn_;
  std::string implementation_;
};

}  // namespace nmt
