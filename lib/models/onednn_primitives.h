#pragma once
// oneDNN's primitive API as the packed-weight products use it (onednn_packed_weight.cpp,
// onednn_amx_weight.cpp): the C functions found once in the libdnnl LibTorch loaded
// (onednn_functions.h), an engine for the process and a stream per thread, and owners for
// the handles those products keep. oneDNN 3 replaced the operation descriptors
// (dnnl_matmul_desc_init + dnnl_primitive_desc_create) by one call and made memory
// descriptors opaque handles; this file is the one place that knows (DNNL_VERSION_MAJOR),
// so the products read the same on oneDNN 2.x (Debian 12) and 3.x (Debian 13).
#include <cstdint>
#include <initializer_list>
#include <string>

#include "onednn_functions.h"

namespace nmt::onednn {

/// The C functions the primitive API needs, each null where the loaded oneDNN lacks it.
struct Functions {
  int missing = 0;  ///< how many were not found
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

/// Found once, on first use.
const Functions& functions();

/// Whether every function above was found.
bool primitives_available();

/// nmt::Error naming `what` and oneDNN's status unless `status` is success.
void check(dnnl_status_t status, const char* what);

/// A memory descriptor as oneDNN's functions take it.
#if DNNL_VERSION_MAJOR >= 3
using MemoryDescRef = const_dnnl_memory_desc_t;
#else
using MemoryDescRef = const dnnl_memory_desc_t*;
#endif

/// A 2-D memory descriptor [rows, cols] of `type` in layout `tag` (dnnl_ab row-major,
/// dnnl_ba column-major, dnnl_format_tag_any for the primitive's choice); rows may be
/// DNNL_RUNTIME_DIM_VAL.
class MatrixDesc {
 public:
  MatrixDesc(int64_t rows, int64_t cols, dnnl_data_type_t type, dnnl_format_tag_t tag);
  ~MatrixDesc();
  MatrixDesc(const MatrixDesc&) = delete;
  MatrixDesc& operator=(const MatrixDesc&) = delete;
  MemoryDescRef get() const;

 private:
  dnnl_memory_desc_t desc_{};
};

/// A primitive descriptor, destroyed with this.
class PrimitiveDesc {
 public:
  PrimitiveDesc() = default;
  explicit PrimitiveDesc(dnnl_primitive_desc_t desc) : desc_(desc) {}
  ~PrimitiveDesc();
  PrimitiveDesc(PrimitiveDesc&& other) noexcept : desc_(other.desc_) { other.desc_ = nullptr; }
  PrimitiveDesc& operator=(PrimitiveDesc&& other) noexcept;
  PrimitiveDesc(const PrimitiveDesc&) = delete;
  PrimitiveDesc& operator=(const PrimitiveDesc&) = delete;
  dnnl_primitive_desc_t get() const { return desc_; }
  /// The layout the primitive chose for its weights.
  MemoryDescRef weights() const;
  /// oneDNN's name for the implementation ("gemm:jit", "brg:avx512_core_amx_int8", ...).
  std::string implementation() const;

 private:
  dnnl_primitive_desc_t desc_ = nullptr;
};

/// A primitive, destroyed with this.
class Primitive {
 public:
  Primitive() = default;
  explicit Primitive(const PrimitiveDesc& desc);
  ~Primitive();
  Primitive(Primitive&& other) noexcept : primitive_(other.primitive_) { other.primitive_ = nullptr; }
  Primitive& operator=(Primitive&& other) noexcept;
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;
  dnnl_primitive_t get() const { return primitive_; }

 private:
  dnnl_primitive_t primitive_ = nullptr;
};

/// A memory object over `data`, or over memory oneDNN allocates (DNNL_MEMORY_ALLOCATE).
class Memory {
 public:
  Memory(MemoryDescRef desc, void* data);
  ~Memory();
  Memory(Memory&& other) noexcept : memory_(other.memory_) { other.memory_ = nullptr; }
  Memory& operator=(Memory&&) = delete;
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  dnnl_memory_t get() const { return memory_; }

 private:
  dnnl_memory_t memory_ = nullptr;
};

/// Post-ops that add the product onto what the destination holds (sgemm's beta = 1).
class AccumulatingAttr {
 public:
  AccumulatingAttr();
  ~AccumulatingAttr();
  AccumulatingAttr(const AccumulatingAttr&) = delete;
  AccumulatingAttr& operator=(const AccumulatingAttr&) = delete;
  dnnl_primitive_attr_t get() const { return attr_; }

 private:
  dnnl_post_ops_t post_ops_ = nullptr;
  dnnl_primitive_attr_t attr_ = nullptr;
};

/// A matmul src [M, K] x weights [K, N] (+ bias [1, N] where `bias` is not null) -> dst
/// [M, N] with `attr` (null: none). nmt::Error where oneDNN refuses.
PrimitiveDesc matmul_desc(MemoryDescRef source, MemoryDescRef weights, MemoryDescRef bias,
                          MemoryDescRef destination, dnnl_primitive_attr_t attr);

/// Runs `primitive` on this thread's stream and waits for it.
void run(const Primitive& primitive, std::initializer_list<dnnl_exec_arg_t> args, const char* what);

/// `data` in layout `plain` copied into memory oneDNN allocates in layout `packed` (a
/// weight packed for the primitive that chose `packed`).
Memory packed_copy(MemoryDescRef plain, void* data, MemoryDescRef packed);

}  // namespace nmt::onednn
