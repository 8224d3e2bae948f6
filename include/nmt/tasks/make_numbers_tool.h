#pragma once
// nmt-make-numbers' command line (lib/tasks/make_numbers_tool.cpp; its main is
// apps/nmt-make-numbers.cpp), in the task's library for the reason tools/tools.h gives.
// Returns the exit code.

namespace nmt::tools::make_numbers_tool {
int run(int argc, char** argv);
}
