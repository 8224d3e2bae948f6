// nmt-prepare: tokenizes a parallel corpus once into a file that nmt-train reads in place.
// Its command line is lib/tools/prepare_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::prepare_tool::run(argc, argv); }
