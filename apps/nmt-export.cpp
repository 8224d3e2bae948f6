// nmt-export: writes a trained model in another toolkit's format, for serving it there.
// Its command line is lib/tools/export_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::export_tool::run(argc, argv); }
