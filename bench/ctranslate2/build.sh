#!/usr/bin/env bash
# Builds CTranslate2 from its source for bench/ctranslate2_compare.sh: the CPU backends that
# build from Debian's packages (ruy, OpenBLAS with OpenMP), ct2-translator included. Never part
# of the project's build or CI.
# SRC is a CTranslate2 4.x checkout with the submodules a CPU build needs: third_party/spdlog,
# cpu_features, cxxopts, ruy and ruy's third_party/cpuinfo (git submodule update --init, or the
# same commits unpacked there). About 15 minutes on 2 cores.
# Usage: bench/ctranslate2/build.sh SRC PREFIX
set -euo pipefail
SRC=$(realpath "$1")
PREFIX=$(realpath -m "$2")
for sub in spdlog cpu_features cxxopts ruy ruy/third_party/cpuinfo; do
  [ -f "$SRC/third_party/$sub/CMakeLists.txt" ] || { echo "error: $SRC/third_party/$sub is empty (submodule missing)" >&2; exit 1; }
done
dpkg-query -W -f='${Status}' libopenblas-openmp-dev 2>/dev/null | grep -q "install ok installed" || {
  echo "installing libopenblas-openmp-dev (OpenBLAS headers, the OpenMP build our tools use too)" >&2
  apt-get install -y -qq --no-install-recommends libopenblas-openmp-dev >&2
}
cmake -S "$SRC" -B "$PREFIX/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DWITH_MKL=OFF -DWITH_DNNL=OFF -DWITH_OPENBLAS=ON -DWITH_RUY=ON -DOPENMP_RUNTIME=COMP \
  -DBUILD_CLI=ON -DBUILD_TESTS=OFF -DWITH_CUDA=OFF >&2
cmake --build "$PREFIX/build" -j"$(nproc)" >&2
cmake --install "$PREFIX/build" >&2
echo "CTranslate2 installed in $PREFIX: $PREFIX/bin/ct2-translator, $PREFIX/lib" >&2
