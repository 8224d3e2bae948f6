// nmt-info: what a model file is: family, size, tokenizers, how it was trained, its scores.
// Its command line is lib/tools/info_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::info_tool::run(argc, argv); }
