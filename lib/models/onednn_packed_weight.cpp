#include "nmt/models/onednn_packed_weight.h"

#include <torch/types.h>

#include <cstdlib>
#include <cstring>

#include "nmt/base/error.h"
#include "nmt/models/onednn_gemm.h"
#include "onednn_functions.h"

namespace nmt {
namespace {

// The C functions this file calls, found once. oneDNN 3 replaced the operation
// descriptors (dnnl_matmul_desc_init + dnnl_primitive_desc_create) by one call and made
// memory descriptors opaque handles; the rest is the same in 2.x and 3.x.
struct Functions {
  int missing = 0;
  template <class F>
  F find(const char* name) {
    auto* address = find_onednn_function(name);
    if (address == nullptr) ++missing;
    return reinterpret_cast<F>(address);
  }
#define NMT_ONEDNN(name) decltype(&::name) name = find<decltype(&::name)>(#name)
  NMT_ONEDNN(dnnl_engine_create);
  NMT_ONEDNN(dnnl_stream_create);
  NMT_ONEDNN(dnnl_stream_wait);
  NMT_ONEDNN(dnnl_stream_destroy);
  NMT_ONEDNN(dnnl_primitive_attr_create);
  NMT_ONEDNN(dnnl_primitive_attr_set_post_ops);
  NMT_ONEDNN(dnnl_primitive_attr_destroy);
  NMT_ONEDNN(dnnl_post_ops_create);
  NMT_ONEDNN(dnnl_post_ops_append_sum);
  NMT_ONEDNN(dnnl_post_ops_destroy);
  NMT_ONEDNN(dnnl_primitive_desc_query_md);
  NMT_ONEDNN(dnnl_primitive_desc_query);
  NMT_ONEDNN(dnnl_primitive_desc_destroy);
  NMT_ONEDNN(dnnl_primitive_create);
  NMT_ONEDNN(dnnl_primitive_execute);
  NMT_ONEDNN(dnnl_primitive_destroy);
  NMT_ONEDNN(dnnl_memory_create);
  NMT_ONEDNN(dnnl_memory_destroy);
  NMT_ONEDNN(dnnl_reorder_primitive_desc_create);
#if DNNL_VERSION_MAJOR >= 3
  NMT_ONEDNN(dnnl_memory_desc_create_with_tag);
  NMT_ONEDNN(dnnl_memory_desc_destroy);
  NMT_ONEDNN(dnnl_matmul_primitive_desc_create);
#else
  NMT_ONEDNN(dnnl_memory_desc_init_by_tag);
  NMT_ONEDNN(dnnl_matmul_desc_init);
  NMT_ONEDNN(dnnl_primitive_desc_create);
#endif
#undef NMT_ONEDNN
};

const Functions& onednn() {
  static const Functions functions;
  return functions;
}

void check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success)
    throw Error(std::string("oneDNN ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

// One engine for the process, made on first use and kept (primitives made on it live
// in models until exit).
dnnl_engine_t cpu_engine() {
  static const dnnl_engine_t engine = [] {
    dnnl_engine_t made = nullptr;
    check(onednn().dnnl_engine_create(&made, dnnl_cpu, 0), "engine creation");
    return made;
  }();
  return engine;
}

// A stream per thread: the server's worker and a tool's main thread never share one.
class ThreadStream {
 public:
  ThreadStream() { check(onednn().dnnl_stream_create(&stream_, cpu_engine(), dnnl_stream_default_flags), "stream creation"); }
  ~ThreadStream() { onednn().dnnl_stream_destroy(stream_); }
  ThreadStream(const ThreadStream&) = delete;
  ThreadStream& operator=(const ThreadStream&) = delete;
  dnnl_stream_t get() const { return stream_; }

 private:
  dnnl_stream_t stream_ = nullptr;
};

dnnl_stream_t thread_stream() {
  thread_local const ThreadStream stream;
  return stream.get();
}

// A row-major [rows, cols] fp32 memory descriptor (tag ab), or [K, N] read column-major
// (tag ba: the Linear weight [out, in] as matmul's [in, out]); rows may be run-time.
class MatrixDesc {
 public:
  MatrixDesc(int64_t rows, int64_t cols, dnnl_format_tag_t tag) {
    const dnnl_dims_t dims = {rows, cols};
#if DNNL_VERSION_MAJOR >= 3
    check(onednn().dnnl_memory_desc_create_with_tag(&desc_, 2, dims, dnnl_f32, tag), "memory descriptor");
#else
    check(onednn().dnnl_memory_desc_init_by_tag(&desc_, 2, dims, dnnl_f32, tag), "memory descriptor");
#endif
  }
#if DNNL_VERSION_MAJOR >= 3
  ~MatrixDesc() { onednn().dnnl_memory_desc_destroy(desc_); }
  const_dnnl_memory_desc_t get() const { return desc_; }
#else
  const dnnl_memory_desc_t* get() const { return &desc_; }
#endif
  MatrixDesc(const MatrixDesc&) = delete;
  MatrixDesc& operator=(const MatrixDesc&) = delete;

 private:
  dnnl_memory_desc_t desc_{};
};

// A oneDNN memory object over `data` (or memory it allocates: DNNL_MEMORY_ALLOCATE).
class Memory {
 public:
  template <class Desc>
  Memory(Desc desc, void* data) {
    check(onednn().dnnl_memory_create(&memory_, desc, cpu_engine(), data), "memory creation");
  }
  ~Memory() { onednn().dnnl_memory_destroy(memory_); }
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  dnnl_memory_t get() const { return memory_; }

 private:
  dnnl_memory_t memory_ = nullptr;
};

// Post-ops that add the product onto what the destination holds (sgemm's beta = 1).
class AccumulatingAttr {
 public:
  AccumulatingAttr() {
    check(onednn().dnnl_post_ops_create(&post_ops_), "post-op creation");
#if DNNL_VERSION_MAJOR >= 3
    check(onednn().dnnl_post_ops_append_sum(post_ops_, 1.0f, 0, dnnl_data_type_undef), "sum post-op");
#else
    check(onednn().dnnl_post_ops_append_sum(post_ops_, 1.0f), "sum post-op");
#endif
    check(onednn().dnnl_primitive_attr_create(&attr_), "attribute creation");
    check(onednn().dnnl_primitive_attr_set_post_ops(attr_, post_ops_), "post-op attribute");
  }
  ~AccumulatingAttr() {
    onednn().dnnl_primitive_attr_destroy(attr_);
    onednn().dnnl_post_ops_destroy(post_ops_);
  }
  AccumulatingAttr(const AccumulatingAttr&) = delete;
  AccumulatingAttr& operator=(const AccumulatingAttr&) = delete;
  dnnl_primitive_attr_t get() const { return attr_; }

 private:
  dnnl_post_ops_t post_ops_ = nullptr;
  dnnl_primitive_attr_t attr_ = nullptr;
};

void run(dnnl_primitive_t primitive, std::initializer_list<dnnl_exec_arg_t> args, const char* what) {
  const auto stream = thread_stream();
  check(onednn().dnnl_primitive_execute(primitive, stream, static_cast<int>(args.size()), args.begin()), what);
  check(onednn().dnnl_stream_wait(stream), what);
}

bool choose_packed() {
  const char* choice = std::getenv("NMT_FP32_GEMM");
  if (choice && (std::strcmp(choice, "blas") == 0 || std::strcmp(choice, "sgemm") == 0)) return false;
  return onednn().missing == 0 && onednn_fp32_gemm_enabled();  // sgemm computes the rows outside the window
}

}  // namespace

bool onednn_packed_weights_enabled() {
  static const bool enabled = choose_packed();
  return enabled;
}

struct OnednnPackedWeight::Handles {
  dnnl_primitive_desc_t matmul_desc = nullptr;
  dnnl_primitive_t matmul = nullptr;
  dnnl_memory_t packed = nullptr;
  ~Handles() {
    if (packed) onednn().dnnl_memory_destroy(packed);
    if (matmul) onednn().dnnl_primitive_destroy(matmul);
    if (matmul_desc) onednn().dnnl_primitive_desc_destroy(matmul_desc);
  }
};

namespace {

// `weight` as the packed product reads it, once it is what that product takes.
torch::Tensor checked_weight(const torch::Tensor& weight) {
  if (!onednn_packed_weights_enabled()) throw Error("oneDNN's matmul primitive was not found in the loaded oneDNN");
  if (weight.dim() != 2 || weight.scalar_type() != torch::kFloat32 || !weight.device().is_cpu())
    throw Error("a packed oneDNN weight is a 2-D fp32 tensor on the CPU");
  return weight.detach().contiguous();
}

}  // namespace

OnednnPackedWeight::OnednnPackedWeight(const torch::Tensor& weight, const torch::Tensor& bias)
    : onednn_(std::make_unique<Handles>()),
      weight_(checked_weight(weight)),
      bias_(bias.defined() ? bias.detach().contiguous() : bias),
      in_(weight_.size(1)),
      out_(weight_.size(0)) {
  // Rows are known only at each call; the weights' layout is oneDNN's choice ("any").
  const MatrixDesc source(DNNL_RUNTIME_DIM_VAL, in_, dnnl_ab), any_weights(in_, out_, dnnl_format_tag_any),
      destination(DNNL_RUNTIME_DIM_VAL, out_, dnnl_ab);
  const AccumulatingAttr accumulate;
  const auto attr = bias_.defined() ? accumulate.get() : nullptr;
#if DNNL_VERSION_MAJOR >= 3
  check(onednn().dnnl_matmul_primitive_desc_create(&onednn_->matmul_desc, cpu_engine(), source.get(),
                                                   any_weights.get(), nullptr, destination.get(), attr),
        "matmul descriptor");
#else
  dnnl_matmul_desc_t matmul{};
  check(onednn().dnnl_matmul_desc_init(&matmul, source.get(), any_weights.get(), nullptr, destination.get()),
        "matmul descriptor");
  check(onednn().dnnl_primitive_desc_create(&onednn_->matmul_desc, &matmul, attr, cpu_engine(), nullptr),
        "matmul descriptor");
#endif
  check(onednn().dnnl_primitive_create(&onednn_->matmul, onednn_->matmul_desc), "matmul creation");
  const char* info = nullptr;
  if (onednn().dnnl_primitive_desc_query(onednn_->matmul_desc, dnnl_query_impl_info_str, 0, &info) == dnnl_success && info)
    implementation_ = info;

  // Pack: reorder the plain weight into the layout the primitive chose.
  const auto packed_desc = onednn().dnnl_primitive_desc_query_md(onednn_->matmul_desc, dnnl_query_weights_md, 0);
  check(onednn().dnnl_memory_create(&onednn_->packed, packed_desc, cpu_engine(), DNNL_MEMORY_ALLOCATE),
        "packed weight allocation");
  const MatrixDesc plain_desc(in_, out_, dnnl_ba);
  const Memory plain_memory(plain_desc.get(), weight_.data_ptr());
  dnnl_primitive_desc_t reorder_desc = nullptr;
  check(onednn().dnnl_reorder_primitive_desc_create(&reorder_desc, plain_desc.get(), cpu_engine(), packed_desc,
                                                    cpu_engine(), nullptr),
        "weight reorder descriptor");
  dnnl_primitive_t reorder = nullptr;
  const auto created = onednn().dnnl_primitive_create(&reorder, reorder_desc);
  onednn().dnnl_primitive_desc_destroy(reorder_desc);
  check(created, "weight reorder creation");
  try {
    run(reorder, {{DNNL_ARG_FROM, plain_memory.get()}, {DNNL_ARG_TO, onednn_->packed}}, "weight packing");
  } catch (...) {
    onednn().dnnl_primitive_destroy(reorder);
    throw;
  }
  onednn().dnnl_primitive_destroy(reorder);
}

OnednnPackedWeight::~OnednnPackedWeight() = default;

// The window where the packed product measured faster than sgemm (the header says how).
constexpr int64_t kFewestPackedRows = 16, kMostPackedRows = 1024, kWideWeight = 4096;

std::string describe_packed_rows() {
  return std::to_string(kFewestPackedRows) + " to " + std::to_string(kMostPackedRows) + " rows (from 2 for " +
         std::to_string(kWideWeight) + " outputs or more), sgemm for the others";
}

bool OnednnPackedWeight::packs_for(int64_t rows) const {
  if (rows > kMostPackedRows) return false;
  return rows >= kFewestPackedRows || (rows > 1 && out_ >= kWideWeight);
}

torch::Tensor OnednnPackedWeight::apply(const torch::Tensor& x) const {
  if (x.dim() != 2 || x.size(1) != in_ || x.scalar_type() != torch::kFloat32 || !x.device().is_cpu())
    throw Error("packed oneDNN linear: expected fp32 [rows, " + std::to_string(in_) + "] on the CPU, got " +
                std::to_string(x.dim()) + "-D [" + (x.dim() == 2 ? std::to_string(x.size(1)) : "?") + " features]");
  const auto a = x.contiguous();
  const int64_t rows = a.size(0);
  if (!packs_for(rows)) return onednn_linear(a, weight_, bias_);
  auto y = output_rows_with_bias(bias_, rows, out_, a.options());  // summed onto, as sgemm does
  if (rows == 0) return y;
  const MatrixDesc source(rows, in_, dnnl_ab), destination(rows, out_, dnnl_ab);
  const Memory source_memory(source.get(), a.data_ptr()), destination_memory(destination.get(), y.data_ptr());
  run(onednn_->matmul,
      {{DNNL_ARG_SRC, source_memory.get()}, {DNNL_ARG_WEIGHTS, onednn_->packed}, {DNNL_ARG_DST, destination_memory.get()}},
      "packed matmul");
  return y;
}

}  // namespace nmt
