// The one Catch2 main; every other tests/*/*.cpp holds test cases only.
#if NMT_CATCH2_MAJOR >= 3
#include "support/catch.h"
int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
#else
// Catch2 2 compiles its implementation and main where this macro precedes its header.
#define CATCH_CONFIG_MAIN
#include "support/catch.h"
#endif
