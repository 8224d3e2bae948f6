// nmt-align: exports attention matrices (JSON Lines), word alignments and an HTML heatmap.
// Its command line is lib/tools/align_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::align_tool::run(argc, argv); }
