// The one Catch2 main; every other tests/*/*.cpp holds test cases only. It sets the
// process up as the tools do (base/process_setup.h) before any test runs a LibTorch
// operation, so that NMT_CPU_ISA caps oneDNN in the tests too.
#if NMT_CATCH2_MAJOR >= 3
#include "support/catch.h"
#else
// Catch2 2 compiles its implementation where this macro precedes its header.
#define CATCH_CONFIG_RUNNER
#include "support/catch.h"
#endif

#include "nmt/base/process_setup.h"

int main(int argc, char* argv[]) {
  nmt::set_up_process();
  return Catch::Session().run(argc, argv);
}
