#include "nmt/models/onednn_amx_weight.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "nmt/base/error.h"
#include "onednn_primitives.h"

namespace nmt {
namespace {

using namespace onednn;

struct Types {
  dnnl_data_type_t source, weights, destination;
  torch::ScalarType source_tensor, weights_tensor, destination_tensor;
};

Types types_of(AmxProduct product) {
  if (product == AmxProduct::bf16)
    return {dnnl_bf16, dnnl_bf16, dnnl_f32, torch::kBFloat16, torch::kBFloat16, torch::kFloat32};
  return {dnnl_u8, dnnl_s8, dnnl_s32, torch::kByte, torch::kChar, torch::kInt};
}

const char* name_of(AmxProduct product) { return product == AmxProduct::bf16 ? "bf16" : "int8"; }

// The matmul of `rows` rows (the weights in `weights`' layout: "any" to let oneDNN choose).
PrimitiveDesc fixed_rows_matmul(AmxProduct product, int64_t rows, int64_t in, int64_t out, MemoryDescRef weights,
                                bool with_bias) {
  const auto types = types_of(product);
  const MatrixDesc source(rows, in, types.source, dnnl_ab), destination(rows, out, types.destination, dnnl_ab),
      bias(1, out, dnnl_f32, dnnl_ab);
  return matmul_desc(source.get(), weights, with_bias ? bias.get() : nullptr, destination.get(), nullptr);
}

// The row count the probe and the packing ask oneDNN about: enough rows for AMX (a single
// row runs on AVX-512 instead), in the packed layout every row count shares.
constexpr int64_t kProbeRows = 16;

std::string probe(AmxProduct product) {
  if (!primitives_available()) return "";
  try {
    const MatrixDesc any_weights(256, 256, types_of(product).weights, dnnl_format_tag_any);
    return fixed_rows_matmul(product, kProbeRows, 256, 256, any_weights.get(), false).implementation();
  } catch (const Error&) {
    return "";
  }
}

bool choose_amx(AmxProduct product) {
  const char* choice = std::getenv("NMT_AMX");
  if (choice && std::strcmp(choice, "off") == 0) return false;
  return amx_probe(product).find("amx") != std::string::npos;
}

}  // namespace

const std::string& amx_probe(AmxProduct product) {
  static const std::string bf16 = probe(AmxProduct::bf16), int8 = probe(AmxProduct::int8);
  return product == AmxProduct::bf16 ? bf16 : int8;
}

bool onednn_amx_enabled(AmxProduct product) {
  static const bool bf16 = choose_amx(AmxProduct::bf16), int8 = choose_amx(AmxProduct::int8);
  return product == AmxProduct::bf16 ? bf16 : int8;
}

int64_t amx_rows_computed(int64_t rows) {
  const auto round_up = [rows](int64_t step) { return (rows + step - 1) / step * step; };
  if (rows <= 64) return rows;
  return rows <= 1024 ? round_up(16) : round_up(256);
}

// The packed weight, in the layout the probe's row count chose, and a primitive per row
// count computed, made under the lock on first use.
struct OnednnAmxWeight::Handles {
  PrimitiveDesc reference;  // owns the packed layout's descriptor
  Memory packed;
  mutable std::mutex lock;
  mutable std::map<int64_t, Primitive> by_rows;
};

namespace {

torch::Tensor checked_weight(AmxProduct product, const torch::Tensor& weight) {
  if (!onednn_amx_enabled(product))
    throw Error(std::string("oneDNN does not run the ") + name_of(product) + " matmul on AMX on this CPU");
  if (weight.dim() != 2 || weight.scalar_type() != types_of(product).weights_tensor || !weight.device().is_cpu())
    throw Error(std::string("a packed ") + name_of(product) + " weight is a 2-D " + name_of(product) +
                " tensor on the CPU");
  return weight.detach().contiguous();
}

}  // namespace

OnednnAmxWeight::OnednnAmxWeight(AmxProduct product, const torch::Tensor& weight, const torch::Tensor& bias)
    : product_(product) {
  const auto plain_weight = checked_weight(product, weight);
  in_ = plain_weight.size(1);
  out_ = plain_weight.size(0);
  if (product == AmxProduct::bf16 && bias.defined()) bias_ = bias.detach().to(torch::kFloat32).contiguous();
  const auto types = types_of(product);
  const MatrixDesc any_weights(in_, out_, types.weights, dnnl_format_tag_any), plain(in_, out_, types.weights, dnnl_ba);
  auto reference = fixed_rows_matmul(product, kProbeRows, in_, out_, any_weights.get(), bias_.defined());
  auto packed = packed_copy(plain.get(), plain_weight.data_ptr(), reference.weights());
  implementation_ = reference.implementation();
  onednn_.reset(new Handles{std::move(reference), std::move(packed), {}, {}});
}

OnednnAmxWeight::~OnednnAmxWeight() = default;

size_t OnednnAmxWeight::primitives_made() const {
  const std::lock_guard<std::mutex> hold(onednn_->lock);
  return onednn_->by_rows.size();
}

const Primitive& OnednnAmxWeight::matmul_for(int64_t rows) const {
  const std::lock_guard<std::mutex> hold(onednn_->lock);
  auto found = onednn_->by_rows.find(rows);
  if (found != onednn_->by_rows.end()) return found->second;
  // Told the packed layout, oneDNN takes it (the packed copy serves every row count) or
  // refuses (an error).
  const auto desc = fixed_rows_matmul(product_, rows, in_, out_, onednn_->reference.weights(), bias_.defined());
  // A reference implementation would take any layout, hundreds of times slower: never silently.
  if (desc.implementation().rfind("ref", 0) == 0)
    throw Error(std::string("oneDNN offers only its reference ") + name_of(product_) + " matmul for " +
                std::to_string(rows) + " rows over the packed weight");
  return onednn_->by_rows.emplace(rows, Primitive(desc)).first->second;
}

torch::Tensor OnednnAmxWeight::apply(const torch::Tensor& x) const {
  const auto types = types_of(product_);
  if (x.dim() != 2 || x.size(1) != in_ || !x.device().is_cpu())
    throw Error(std::string("packed ") + name_of(product_) + " matmul: expected [rows, " + std::to_string(in_) +
                "] on the CPU, got a " + std::to_string(x.dim()) + "-D input");
  if (product_ == AmxProduct::int8 && x.scalar_type() != torch::kByte)
    throw Error("packed int8 matmul: expected u8 inputs");
  const int64_t rows = x.size(0), computed = amx_rows_computed(rows);
  auto y = torch::empty({computed, out_}, x.options().dtype(types.destination_tensor));
  if (rows == 0) return y;
  // The inputs in the primitive's type and row count: the extra rows zero.
  auto source = x;
  if (computed != rows || x.scalar_type() != types.source_tensor || !x.is_contiguous()) {
    source = torch::empty({computed, in_}, x.options().dtype(types.source_tensor));
    source.narrow(0, 0, rows).copy_(x);
    if (computed != rows) source.narrow(0, rows, computed - rows).zero_();
  }
  const MatrixDesc source_desc(computed, in_, types.source, dnnl_ab), destination_desc(computed, out_, types.destination, dnnl_ab);
  const Memory source_memory(source_desc.get(), source.data_ptr()), destination_memory(destination_desc.get(), y.data_ptr());
  const auto& matmul = matmul_for(computed);
  if (bias_.defined()) {
    const MatrixDesc bias_desc(1, out_, dnnl_f32, dnnl_ab);
    const Memory bias_memory(bias_desc.get(), bias_.data_ptr());
    run(matmul,
        {{DNNL_ARG_SRC, source_memory.get()}, {DNNL_ARG_WEIGHTS, onednn_->packed.get()},
         {DNNL_ARG_BIAS, bias_memory.get()}, {DNNL_ARG_DST, destination_memory.get()}},
        "packed AMX matmul");
  } else {
    run(matmul,
        {{DNNL_ARG_SRC, source_memory.get()}, {DNNL_ARG_WEIGHTS, onednn_->packed.get()},
         {DNNL_ARG_DST, destination_memory.get()}},
        "packed AMX matmul");
  }
  return computed == rows ? y : y.narrow(0, 0, rows);
}

}  // namespace nmt
