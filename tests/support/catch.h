#pragma once
// The one place the tests include Catch2. Debian 12 packages Catch2 2 (one header,
// catch2/catch.hpp) and Debian 13 Catch2 3 (split headers, names moved into
// Catch::Matchers); CMake finds either and says which in NMT_CATCH2_MAJOR. The tests
// use the names below, which mean the same under both.
#include <string>

// LibTorch 1.13 (Debian 12) logs through glog, whose CHECK(condition) clashes with
// Catch2's CHECK. Its header first, then Catch2's: Catch2's definition is the one that
// stays, also where several test files are compiled as one unit (unity builds) and a
// later file includes LibTorch (glog's include guard keeps it from redefining CHECK).
#include <c10/util/Logging.h>

#if NMT_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>
using Catch::Approx;
/// Matches a string that contains `part` (Catch2 3: ContainsSubstring).
inline auto HasSubstring(const std::string& part) { return Catch::Matchers::ContainsSubstring(part); }
#elif NMT_CATCH2_MAJOR == 2
#include <catch2/catch.hpp>
/// Matches a string that contains `part` (Catch2 2: Contains).
inline auto HasSubstring(const std::string& part) { return Catch::Matchers::Contains(part); }
#else
#error "NMT_CATCH2_MAJOR must be 2 or 3 (set by CMakeLists.txt from the Catch2 it found)"
#endif
