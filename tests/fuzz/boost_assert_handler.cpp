// Boost's assertions stay on in the fuzz build (Release turns them off), and each one that
// fires is a finding: it traps, as a sanitizer report does. Except one that Boost.Beast itself
// removed as wrong (boostorg/beast pull request 2861, in Boost 1.86): parse_chunk_header
// asserts n >= 5 when the final chunk of a chunked body ("0\r\n", "0;\r\n") arrives before the
// blank line that ends it, where 3 or 4 bytes are valid and the parser rightly asks for more
// (need_more, what Release does). Debian 12 ships Boost 1.74 and Debian 13 1.83, both before it.
#include <cstdio>
#include <cstring>

namespace {

bool ends_with(const char* text, const char* suffix) {
  const size_t text_size = std::strlen(text), suffix_size = std::strlen(suffix);
  return text_size >= suffix_size && std::strcmp(text + text_size - suffix_size, suffix) == 0;
}

bool known_wrong(const char* expression, const char* file) {
  return std::strcmp(expression, "n >= 5") == 0 && ends_with(file, "beast/http/impl/basic_parser.ipp");
}

}  // namespace

namespace boost {

void assertion_failed(const char* expression, const char* function, const char* file, long line) {
  if (known_wrong(expression, file)) return;
  std::fprintf(stderr, "%s:%ld: %s: Boost assertion '%s' failed\n", file, line, function, expression);
  __builtin_trap();
}

void assertion_failed_msg(const char* expression, const char* message, const char* function, const char* file,
                          long line) {
  std::fprintf(stderr, "%s:%ld: %s: Boost assertion '%s' failed: %s\n", file, line, function, expression, message);
  __builtin_trap();
}

}  // namespace boost
