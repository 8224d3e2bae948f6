#pragma once
// nmt-serve's command line (lib/serve/serve_tool.cpp; its main is apps/nmt-serve.cpp), in
// the server's library for the reason tools/tools.h gives. Returns the exit code.

namespace nmt::tools::serve_tool {
int run(int argc, char** argv);
}
