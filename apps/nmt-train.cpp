// nmt-train: trains a translation model on a parallel corpus.
// Its command line is lib/tools/train_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::train_tool::run(argc, argv); }
