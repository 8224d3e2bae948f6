#!/usr/bin/env bash
# Builds CTranslate2 from its source for bench/ctranslate2_compare.sh with the fastest CPU
# backend that builds from Debian's packages, ct2-translator included: oneDNN 3 on Debian 13
# (CTranslate2's DNNL backend needs oneDNN 3's API; it then runs fp32 and int8 GEMMs, int8
# with VNNI where the CPU has it), OpenBLAS (fp32) and ruy (int8) on Debian 12. Never part of
# the project's build or CI.
# With MKL=1 (Debian 13 only) it is built as pip's wheels are: Intel MKL and oneDNN both, the
# backend chosen when it runs (CTranslate2 takes MKL on Intel CPUs and oneDNN on others;
# CT2_USE_MKL=1 or 0 forces one), MKL from Debian's non-free `libmkl-dev` (older than the MKL
# the wheels bundle) with GNU OpenMP, as our tools use.
# SRC is a CTranslate2 4.x checkout with the submodules a CPU build needs: third_party/spdlog,
# cpu_features, cxxopts, ruy and ruy's third_party/cpuinfo (git submodule update --init, or the
# same commits unpacked there). About 15 minutes on 2 cores.
# Usage: [MKL=1] bench/ctranslate2/build.sh SRC PREFIX
set -euo pipefail
SRC=$(realpath "$1")
PREFIX=$(realpath -m "$2")
for sub in spdlog cpu_features cxxopts ruy ruy/third_party/cpuinfo; do
  [ -f "$SRC/third_party/$sub/CMakeLists.txt" ] || { echo "error: $SRC/third_party/$sub is empty (submodule missing)" >&2; exit 1; }
done
release=$(. /etc/os-release && echo "${VERSION_CODENAME:-unknown}")
if [ "$release" = bookworm ]; then
  packages=(libopenblas-openmp-dev libsentencepiece-dev)  # OpenBLAS with OpenMP, as our tools use
  backend=(-DWITH_DNNL=OFF -DWITH_OPENBLAS=ON -DWITH_RUY=ON)
else
  packages=(libdnnl-dev libsentencepiece-dev)
  backend=(-DWITH_MKL=OFF -DWITH_DNNL=ON -DWITH_OPENBLAS=OFF -DWITH_RUY=OFF)
fi
if [ "${MKL:-0}" = 1 ]; then
  [ "$release" != bookworm ] || { echo "error: MKL=1 needs Debian 13 (its libmkl-dev; oneDNN 3 beside it)" >&2; exit 1; }
  apt-cache show libmkl-dev >/dev/null 2>&1 ||
    { echo "error: no libmkl-dev: add 'non-free' to the Debian sources (deb http://deb.debian.org/debian trixie main non-free), then apt-get update" >&2; exit 1; }
  packages+=(libmkl-dev)
  # Debian puts mkl.h in /usr/include/mkl; CTranslate2 looks for MKL_ROOT/include/mkl.h.
  backend=(-DWITH_MKL=ON -DMKL_ROOT=/usr -DMKL_INCLUDE_DIR=/usr/include/mkl -DWITH_DNNL=ON -DWITH_OPENBLAS=OFF -DWITH_RUY=OFF)
fi
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || {
    echo "installing $package" >&2
    apt-get install -y -qq --no-install-recommends "$package" >&2
  }
done
echo "backend on $release: ${backend[*]}" >&2
cmake -S "$SRC" -B "$PREFIX/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  "${backend[@]}" -DOPENMP_RUNTIME=COMP \
  -DBUILD_CLI=ON -DBUILD_TESTS=OFF -DWITH_CUDA=OFF >&2
cmake --build "$PREFIX/build" -j"$(nproc)" >&2
cmake --install "$PREFIX/build" >&2
echo "CTranslate2 installed in $PREFIX: $PREFIX/bin/ct2-translator, $PREFIX/lib" >&2
