#include "onednn_primitives.h"

#include "nmt/base/error.h"

namespace nmt::onednn {

const Functions& functions() {
  static const Functions found;
  return found;
}

bool primitives_available() { return functions().missing == 0; }

void check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success)
    throw Error(std::string("oneDNN ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

namespace {

// One engine for the process, made on first use and kept (primitives made on it live in
// models until exit).
dnnl_engine_t cpu_engine() {
  static const dnnl_engine_t engine = [] {
    dnnl_engine_t made = nullptr;
    check(functions().dnnl_engine_create(&made, dnnl_cpu, 0), "engine creation");
    return made;
  }();
  return engine;
}

// A stream per thread: the server's worker and a tool's main thread never share one.
class ThreadStream {
 public:
  ThreadStream() {
    check(functions().dnnl_stream_create(&stream_, cpu_engine(), dnnl_stream_default_flags), "stream creation");
  }
  ~ThreadStream() { functions().dnnl_stream_destroy(stream_); }
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

}  // namespace

MatrixDesc::MatrixDesc(int64_t rows, int64_t cols, dnnl_data_type_t type, dnnl_format_tag_t tag) {
  const dnnl_dims_t dims = {rows, cols};
#if DNNL_VERSION_MAJOR >= 3
  check(functions().dnnl_memory_desc_create_with_tag(&desc_, 2, dims, type, tag), "memory descriptor");
#else
  check(functions().dnnl_memory_desc_init_by_tag(&desc_, 2, dims, type, tag), "memory descriptor");
#endif
}

#if DNNL_VERSION_MAJOR >= 3
MatrixDesc::~MatrixDesc() { functions().dnnl_memory_desc_destroy(desc_); }
MemoryDescRef MatrixDesc::get() const { return desc_; }
#else
MatrixDesc::~MatrixDesc() = default;
MemoryDescRef MatrixDesc::get() const { return &desc_; }
#endif

PrimitiveDesc::~PrimitiveDesc() {
  if (desc_) functions().dnnl_primitive_desc_destroy(desc_);
}

PrimitiveDesc& PrimitiveDesc::operator=(PrimitiveDesc&& other) noexcept {
  if (this != &other) {
    if (desc_) functions().dnnl_primitive_desc_destroy(desc_);
    desc_ = other.desc_;
    other.desc_ = nullptr;
  }
  return *this;
}

MemoryDescRef PrimitiveDesc::weights() const {
  return functions().dnnl_primitive_desc_query_md(desc_, dnnl_query_weights_md, 0);
}

std::string PrimitiveDesc::implementation() const {
  const char* info = nullptr;
  if (functions().dnnl_primitive_desc_query(desc_, dnnl_query_impl_info_str, 0, &info) == dnnl_success && info)
    return info;
  return "";
}

Primitive::Primitive(const PrimitiveDesc& desc) {
  check(functions().dnnl_primitive_create(&primitive_, desc.get()), "primitive creation");
}

Primitive::~Primitive() {
  if (primitive_) functions().dnnl_primitive_destroy(primitive_);
}

Primitive& Primitive::operator=(Primitive&& other) noexcept {
  if (this != &other) {
    if (primitive_) functions().dnnl_primitive_destroy(primitive_);
    primitive_ = other.primitive_;
    other.primitive_ = nullptr;
  }
  return *this;
}

Memory::Memory(MemoryDescRef desc, void* data) {
  check(functions().dnnl_memory_create(&memory_, desc, cpu_engine(), data), "memory creation");
}

Memory::~Memory() {
  if (memory_) functions().dnnl_memory_destroy(memory_);
}

AccumulatingAttr::AccumulatingAttr() {
  check(functions().dnnl_post_ops_create(&post_ops_), "post-op creation");
#if DNNL_VERSION_MAJOR >= 3
  check(functions().dnnl_post_ops_append_sum(post_ops_, 1.0f, 0, dnnl_data_type_undef), "sum post-op");
#else
  check(functions().dnnl_post_ops_append_sum(post_ops_, 1.0f), "sum post-op");
#endif
  check(functions().dnnl_primitive_attr_create(&attr_), "attribute creation");
  check(functions().dnnl_primitive_attr_set_post_ops(attr_, post_ops_), "post-op attribute");
}

AccumulatingAttr::~AccumulatingAttr() {
  functions().dnnl_primitive_attr_destroy(attr_);
  functions().dnnl_post_ops_destroy(post_ops_);
}

PrimitiveDesc matmul_desc(MemoryDescRef source, MemoryDescRef weights, MemoryDescRef bias,
                          MemoryDescRef destination, dnnl_primitive_attr_t attr) {
  dnnl_primitive_desc_t made = nullptr;
#if DNNL_VERSION_MAJOR >= 3
  check(functions().dnnl_matmul_primitive_desc_create(&made, cpu_engine(), source, weights, bias, destination, attr),
        "matmul descriptor");
#else
  dnnl_matmul_desc_t matmul{};
  check(functions().dnnl_matmul_desc_init(&matmul, source, weights, bias, destination), "matmul descriptor");
  check(functions().dnnl_primitive_desc_create(&made, &matmul, attr, cpu_engine(), nullptr), "matmul descriptor");
#endif
  return PrimitiveDesc(made);
}

void run(const Primitive& primitive, std::initializer_list<dnnl_exec_arg_t> args, const char* what) {
  const auto stream = thread_stream();
  check(functions().dnnl_primitive_execute(primitive.get(), stream, static_cast<int>(args.size()), args.begin()),
        what);
  check(functions().dnnl_stream_wait(stream), what);
}

Memory packed_copy(MemoryDescRef plain, void* data, MemoryDescRef packed) {
  Memory copy(packed, DNNL_MEMORY_ALLOCATE);
  const Memory source(plain, data);
  dnnl_primitive_desc_t made = nullptr;
  check(functions().dnnl_reorder_primitive_desc_create(&made, plain, cpu_engine(), packed, cpu_engine(), nullptr),
        "weight reorder descriptor");
  const PrimitiveDesc reorder_desc(made);
  const Primitive reorder(reorder_desc);
  run(reorder, {{DNNL_ARG_FROM, source.get()}, {DNNL_ARG_TO, copy.get()}}, "weight packing");
  return copy;
}

}  // namespace nmt::onednn
