// nmt-average: averages the weights of several checkpoints of one run into a new model file.
// Its command line is lib/tools/average_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::average_tool::run(argc, argv); }
