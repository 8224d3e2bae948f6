#pragma once
// Memory the allocator keeps after the program freed it, given back to the system. A
// long-running process (nmt-serve) that once answered a large request would otherwise keep
// that request's peak for good: tcmalloc (which the tools link) and glibc's malloc both
// hold freed pages for reuse.
#include <cstddef>
#include <string>

namespace nmt {

class FreeMemoryReleaser {
 public:
  /// Which allocator runs is found here, once (tcmalloc's functions are looked up by name,
  /// so a build without it uses glibc's). Memory held free up to `keep_bytes` stays: it is
  /// what the next request would take back at once.
  explicit FreeMemoryReleaser(size_t keep_bytes);

  /// Bytes held free by the allocator now, as it counts them (glibc's count keeps the
  /// chunks malloc_trim gave back: there every call past the threshold trims again).
  size_t held_free_bytes() const;
  /// Gives free memory back when more than keep_bytes is held; returns the bytes held
  /// before (0 when nothing was done).
  size_t release_if_over() const;
  /// "tcmalloc" or "glibc malloc".
  const std::string& allocator() const { return allocator_; }

 private:
  using GetProperty = int (*)(const char*, size_t*);
  using ReleaseAll = void (*)();

  size_t keep_bytes_;
  GetProperty tcmalloc_property_ = nullptr;
  ReleaseAll tcmalloc_release_ = nullptr;
  std::string allocator_;
};

}  // namespace nmt
