#include "nmt/base/free_memory.h"

#include <dlfcn.h>
#include <malloc.h>

namespace nmt {

FreeMemoryReleaser::FreeMemoryReleaser(size_t keep_bytes) : keep_bytes_(keep_bytes) {
  // gperftools' C interface (gperftools/malloc_extension_c.h), present when tcmalloc is
  // linked; looked up so that the library does not depend on it.
  tcmalloc_property_ = reinterpret_cast<GetProperty>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
  tcmalloc_release_ = reinterpret_cast<ReleaseAll>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
  if (!tcmalloc_property_ || !tcmalloc_release_) tcmalloc_property_ = nullptr, tcmalloc_release_ = nullptr;
  allocator_ = tcmalloc_release_ ? "tcmalloc" : "glibc malloc";
}

size_t FreeMemoryReleaser::held_free_bytes() const {
  if (tcmalloc_property_) {
    size_t free_bytes = 0;  // free pages still mapped (freed small objects wait in caches)
    tcmalloc_property_("tcmalloc.pageheap_free_bytes", &free_bytes);
    return free_bytes;
  }
  return mallinfo2().fordblks;
}

size_t FreeMemoryReleaser::release_if_over() const {
  const size_t held = held_free_bytes();
  if (held <= keep_bytes_) return 0;
  if (tcmalloc_release_) tcmalloc_release_();
  else malloc_trim(0);
  return held;
}

}  // namespace nmt
