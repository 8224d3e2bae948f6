#!/usr/bin/env bash
# Builds the project for arm64 (aarch64) on this x86 machine and runs its unit tests under
# qemu-aarch64: proof that nothing assumes x86 (intrinsics, target_clones,
# __builtin_cpu_supports) and that the arm64 fallbacks compute what the tests expect.
#
#   scripts/cross-aarch64.sh [DIR] [CATCH2 TEST SPEC...]
#
# DIR (default build-aarch64/) receives:
#   sysroot/  Debian bookworm's arm64 packages the build needs (LibTorch, SentencePiece, ...),
#             downloaded with their dependencies by a private apt state (the system's apt
#             configuration and installed packages are not touched) and unpacked, not installed;
#   build/    the CMake build (scripts/aarch64-toolchain.cmake).
# Then bin/nmt_tests runs under `qemu-aarch64 -L sysroot` with the given Catch2 test spec.
# Default: every test but those that start another arm64 program, which qemu-user cannot do
# without binfmt_misc (the distributed ranks, nmt-train killed and resumed; the shell tests
# of the tools are not run for the same reason) and the [slow] one (a model trained to
# align: ~3 minutes natively, hours emulated). On 2 cores the first build takes ~20 minutes
# and the emulated tests ~7; nothing here measures speed.
#
# Needs (apt-get install): g++-aarch64-linux-gnu qemu-user cmake, and network access to
# the Debian mirror of /etc/apt/sources.list(.d).
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
out=$(realpath -m "${1:-build-aarch64}")
shift || true
for tool in aarch64-linux-gnu-g++ qemu-aarch64 cmake; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install g++-aarch64-linux-gnu qemu-user cmake)" >&2; exit 2; }
done
sysroot=$out/sysroot
mkdir -p "$out"

# The same libraries as scripts/install-deps.sh installs on x86, plus the C and C++ runtimes
# and headers that the cross compiler brings on x86 but a sysroot must hold.
source scripts/library-packages.sh
packages=("${library_packages[@]}" libc6-dev libstdc++-12-dev libgomp1)

make_sysroot() {
  local apt_dir=$out/apt
  rm -rf "$apt_dir" "$sysroot.partial"
  mkdir -p "$apt_dir"/{lists/partial,cache/archives/partial} "$sysroot.partial"
  touch "$apt_dir/status"
  local apt=(apt-get -q -o APT::Architecture=arm64 -o APT::Architectures=arm64
             -o Dir::State::Lists="$apt_dir/lists" -o Dir::State::status="$apt_dir/status"
             -o Dir::Cache="$apt_dir/cache" -o Debug::NoLocking=1)
  echo "arm64 package lists..." >&2
  "${apt[@]}" update >&2
  # Everything the packages need, resolved against an empty system.
  "${apt[@]}" install -s --no-install-recommends "${packages[@]}" |
    awk '/^Inst /{ version=$3; gsub(/[()]/, "", version); print $2 "=" version }' >"$apt_dir/closure"
  echo "downloading $(wc -l <"$apt_dir/closure") arm64 packages..." >&2
  (cd "$apt_dir/cache/archives" && xargs "${apt[@]}" download <"$apt_dir/closure" >&2)
  for deb in "$apt_dir"/cache/archives/*.deb; do dpkg-deb -x "$deb" "$sysroot.partial"; done
  local lib=$sysroot.partial/usr/lib/aarch64-linux-gnu
  # Links that are absolute on a real system point into the sysroot here.
  find "$sysroot.partial" -type l -lname '/*' | while read -r link; do
    local target
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot.partial$target")" "$link"
  done
  # libblas.so.3 and liblapack.so.3 are update-alternatives links that unpacking does not
  # make, and libopenblas.so.0 beside them is found through ld.so.conf, which is not read.
  for blas in libblas.so.3 liblapack.so.3 libopenblas.so.0; do ln -sfn "openblas-openmp/$blas" "$lib/$blas"; done
  mv "$sysroot.partial" "$sysroot"
}
[ -d "$sysroot" ] || make_sysroot

cmake -S "$source_dir" -B "$out/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$source_dir/scripts/aarch64-toolchain.cmake" -DCMAKE_SYSROOT="$sysroot" >&2
cmake --build "$out/build" -j"$(nproc)" >&2

spec=("$@")
[ ${#spec[@]} -gt 0 ] || spec=("~[distributed]" "~[faults]" "~[slow]" --durations yes)
echo "running nmt_tests under qemu-aarch64: ${spec[*]}" >&2
cd "$out/build"
qemu-aarch64 -L "$sysroot" bin/nmt_tests "${spec[@]}"
