// nmt-make-numbers: writes the bundled English->German number-words task as
// DIR/{train,valid,test}.{en,de}, one sentence per line, line-aligned.
// Its command line is lib/tasks/make_numbers_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tasks/make_numbers_tool.h"

int main(int argc, char** argv) { return nmt::tools::make_numbers_tool::run(argc, argv); }
