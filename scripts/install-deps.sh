#!/usr/bin/env bash
# Installs the Debian packages nmt needs. Idempotent and non-interactive; run as root
# (or with sudo available). Also makes sure LibTorch uses OpenBLAS, not the reference
# BLAS that libtorch-dev pulls in (measured: ~6 vs 60-90 GFLOP/s on a 1024x1024 matmul).
set -euo pipefail

source "$(dirname "$0")/library-packages.sh"
packages=(
  cmake g++ make ccache
  "${library_packages[@]}"
  sentencepiece
  clang-14 libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer with ASan/UBSan
  chromium time python3  # tests: HTML heatmap in a headless browser; bench: peak memory
  curl wrk  # tests: nmt-serve over HTTP; bench: bench/serve_load.sh
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
