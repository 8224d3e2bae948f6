// nmt-translate: translates raw text from stdin with a trained checkpoint.
// Its command line is lib/tools/translate_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::translate_tool::run(argc, argv); }
