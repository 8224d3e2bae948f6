// nmt-eval: corpus scores of a hypothesis file against a reference: any registered metric
// (BLEU and chrF as sacreBLEU computes them by default, exact match).
// Its command line is lib/tools/eval_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::eval_tool::run(argc, argv); }
