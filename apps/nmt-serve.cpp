// nmt-serve: a translation server (JSON API, OpenNMT-py's REST shape, a page with the
// attention heatmap) over one checkpoint; docs/serve.md describes the API.
// Its command line is lib/serve/serve_tool.cpp, compiled with the library (CMakeLists.txt says why).
#include "nmt/serve/serve_tool.h"

int main(int argc, char** argv) { return nmt::tools::serve_tool::run(argc, argv); }
