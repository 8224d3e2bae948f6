#include "onednn_functions.h"

#include <dlfcn.h>

#include "nmt/base/library_versions.h"

namespace nmt {

void* find_onednn_function(const char* name) { return onednn_usable() ? dlsym(RTLD_DEFAULT, name) : nullptr; }

}  // namespace nmt
