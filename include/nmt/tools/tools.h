#pragma once
// The command lines of the tools built on libnmt: nmt-X's main (apps/nmt-X.cpp) is
// `return nmt::tools::X_tool::run(argc, argv);`, the tool itself lib/tools/X_tool.cpp.
// Why there: a file that includes LibTorch's and CLI11's headers pays ~20 s to compile them;
// the library's unity batches (CMakeLists.txt) pay that once for many files, a main of its
// own once more per tool. nmt-serve and nmt-make-numbers follow the same shape in their own
// libraries (serve/serve_tool.h, tasks/make_numbers_tool.h).
// Each run() parses argv and returns the exit code (0, 1 failure, 2 usage: base/cli.h).

namespace nmt::tools {

namespace align_tool { int run(int argc, char** argv); }      ///< nmt-align
namespace average_tool { int run(int argc, char** argv); }    ///< nmt-average
namespace eval_tool { int run(int argc, char** argv); }       ///< nmt-eval
namespace export_tool { int run(int argc, char** argv); }     ///< nmt-export
namespace import_tool { int run(int argc, char** argv); }     ///< nmt-import
namespace info_tool { int run(int argc, char** argv); }       ///< nmt-info
namespace prepare_tool { int run(int argc, char** argv); }    ///< nmt-prepare
namespace shortlist_tool { int run(int argc, char** argv); }  ///< nmt-shortlist
namespace spm_train_tool { int run(int argc, char** argv); }  ///< nmt-spm-train
namespace train_tool { int run(int argc, char** argv); }      ///< nmt-train
namespace translate_tool { int run(int argc, char** argv); }  ///< nmt-translate

}  // namespace nmt::tools
