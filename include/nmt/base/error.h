#pragma once
// One exception type for every user-facing failure: bad input files, bad flags,
// incompatible checkpoints. Tools catch it in main, print it on one line and exit 1.
#include <stdexcept>
#include <string>

namespace nmt {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// "file:line: message", the form compilers use, so editors can jump to it.
std::string at_line(const std::string& file, long line, const std::string& message);

}  // namespace nmt
