// nmt-spm-train: trains the SentencePiece tokenizer that nmt-train and the models use.
// Its command line is lib/tools/spm_train_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/tools/tools.h"

int main(int argc, char** argv) { return nmt::tools::spm_train_tool::run(argc, argv); }
