#!/usr/bin/env bash
# Compiles the library's sources for aarch64 without linking (-fsyntax-only), with
# Debian's cross compiler (apt-get install g++-aarch64-linux-gnu) against this machine's
# LibTorch headers: catches code that assumes x86 (intrinsics, target_clones,
# __builtin_cpu_supports) without an arm64 LibTorch. Not a build: nothing is linked or run.
# Usage: scripts/check-aarch64-syntax.sh [FILE.cpp ...]   (default: every lib/ source; slow)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v aarch64-linux-gnu-g++ >/dev/null || { echo "needs aarch64-linux-gnu-g++ (g++-aarch64-linux-gnu)" >&2; exit 2; }
[ -f build/generated/nmt_version.h ] || { echo "configure first (cmake -S . -B build): needs build/generated" >&2; exit 2; }
files=("$@")
[ ${#files[@]} -gt 0 ] || mapfile -t files < <(find lib -name '*.cpp' | sort)
failed=0
for f in "${files[@]}"; do
  # The file's own flags from CMakeLists.txt (COMPILE_OPTIONS of one source file), if any.
  own_flags=$(grep -o "set_source_files_properties($f PROPERTIES COMPILE_OPTIONS [^)]*" CMakeLists.txt |
    sed 's/.*COMPILE_OPTIONS //' || true)
  # shellcheck disable=SC2086  # the file's flags, split into arguments on purpose
  if aarch64-linux-gnu-g++ -std=c++17 -fsyntax-only -fopenmp -Wall $own_flags -Iinclude -Ilib/text -Ilib/models -Ibuild/generated \
      -isystem /usr/include/torch/csrc/api/include -I/usr/include "$f" 2>"/tmp/aarch64-$$.log"; then
    echo "ok      $f"
  else
    echo "FAILED  $f"; sed 's/^/        /' "/tmp/aarch64-$$.log" | head -20; failed=1
  fi
done
rm -f "/tmp/aarch64-$$.log"
exit $failed
