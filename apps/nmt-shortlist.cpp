// nmt-shortlist: makes a vocabulary shortlist from a parallel corpus (nmt-translate --shortlist).
// Its command line is lib/tools/shortlist_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::shortlist_tool::run(argc, argv); }
