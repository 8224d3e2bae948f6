#include "nmt/base/error.h"

namespace nmt {

std::string at_line(const std::string& file, long line, const std::string& message) {
  return file + ":" + std::to_string(line) + ": " + message;
}

}  // namespace nmt
