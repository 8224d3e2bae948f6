#!/usr/bin/env bash
# Installs the Debian packages nmt needs. Idempotent and non-interactive; run as root
# (or with sudo available). Also makes sure LibTorch uses OpenBLAS, not the reference
# BLAS that libtorch-dev pulls in (measured: ~6 vs 60-90 GFLOP/s on a 1024x1024 matmul).
# Knows Debian 12 (bookworm: LibTorch 1.13, oneDNN 2.6, Catch2 2) and Debian 13 (trixie:
# LibTorch 2.6, oneDNN 3.7, Catch2 3); the package names that differ are chosen here.
# NMT_LIBTORCH=cuda (Debian 13 only): LibTorch built with CUDA 12.4 (libtorch-cuda-dev), its
# Gloo and NCCL, from Debian's contrib section (its CUDA libraries from non-free), in place
# of the CPU LibTorch; it runs on machines without a GPU too. Switching either way replaces
# the other LibTorch.
set -euo pipefail

source "$(dirname "$0")/library-packages.sh"
release=$( (. /etc/os-release && echo "${VERSION_CODENAME:-unknown}") 2>/dev/null || echo unknown)
case "$release" in
  bookworm) clang_version=14 ;;
  trixie)
    clang_version=19
    # Catch2 3 is packaged as libcatch2-dev ("catch2" is only a transitional package there).
    library_packages=("${library_packages[@]/#catch2/libcatch2-dev}")
    ;;
  *)
    echo "error: Debian 12 (bookworm) or 13 (trixie) expected; /etc/os-release says '$release'" >&2
    exit 1
    ;;
esac
case "${NMT_LIBTORCH:-cpu}" in
  cpu) ;;
  cuda)
    [ "$release" = trixie ] || { echo "error: NMT_LIBTORCH=cuda needs Debian 13 (libtorch-cuda-dev); this is $release" >&2; exit 1; }
    apt-cache show libtorch-cuda-dev >/dev/null 2>&1 || {
      echo "error: NMT_LIBTORCH=cuda: apt knows no libtorch-cuda-dev; enable Debian's contrib and non-free sections" \
        "(e.g. 'deb http://deb.debian.org/debian trixie main contrib non-free' in /etc/apt/sources.list), then apt-get update" >&2
      exit 1
    }
    library_packages=("${library_packages[@]/#libtorch-dev/libtorch-cuda-dev}")
    library_packages=("${library_packages[@]/#libgloo-dev/libgloo-cuda-dev}")
    library_packages+=(libnccl-dev nvidia-cuda-toolkit)  # LibTorch's CMake files look for nvcc
    ;;
  *) echo "error: NMT_LIBTORCH is '$NMT_LIBTORCH'; cpu (the default) or cuda" >&2; exit 1 ;;
esac
echo "Debian release: $release (clang-$clang_version for the fuzz harnesses), LibTorch for ${NMT_LIBTORCH:-cpu}" >&2
packages=(
  cmake g++ make ccache
  "${library_packages[@]}"
  sentencepiece
  "clang-$clang_version" "libclang-rt-$clang_version-dev"  # scripts/fuzz.sh: libFuzzer with ASan/UBSan
  chromium time python3  # tests: HTML heatmap in a headless browser; bench: peak memory
  curl wrk  # tests: nmt-serve over HTTP; bench: bench/serve_load.sh
  ca-certificates  # curl over https (scripts/fetch-marian-reference.sh)
  iproute2  # tests: hosts in network namespaces (tests/apps/multihost_test.sh)
  nodejs  # tests: Marian itself (WebAssembly) reads our Marian export (tests/apps/marian_test.sh)
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
fi

# libblas.so.3 is an alternatives link; point it (and LAPACK) at OpenBLAS.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3; do
  target=/usr/lib/$arch/openblas-openmp/$lib
  if [ -e "$target" ]; then
    as_root update-alternatives --set "$lib-$arch" "$target" >/dev/null
  fi
done
blas=$(readlink -f "/usr/lib/$arch/libblas.so.3")
case "$blas" in
  *openblas*) echo "BLAS: $blas" >&2 ;;
  *) echo "warning: libblas.so.3 resolves to $blas, not OpenBLAS: training will be slow" >&2 ;;
esac

# The tests' reference Marian (npm's bergamot-translator, run by Node): fetched, not installed.
bash "$(dirname "$0")/fetch-marian-reference.sh"
