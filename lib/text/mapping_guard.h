#pragma once
// (lib/text only.) A file mapped read-only that another process truncates turns the next
// access past its new end into SIGBUS, which would end the run with no word of why. The
// ranges registered here make that fault an error naming the file and exit status 1. No
// library offers this; it is one signal handler and a fixed table it can read safely.
#include <cstddef>
#include <string>

namespace nmt::text_detail {

/// From now until unguard_mapping(start), a SIGBUS in [start, start + bytes) prints
/// "<program>: error: <path> was truncated while this run read it ..." and exits 1. At most 32 mappings at once
/// (more are left unguarded).
void guard_mapping(const void* start, size_t bytes, const std::string& path);
void unguard_mapping(const void* start);

}  // namespace nmt::text_detail
