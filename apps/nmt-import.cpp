// nmt-import: reads a model of another toolkit (Marian) into one of our checkpoints.
// Its command line is lib/tools/import_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::import_tool::run(argc, argv); }
