# The Debian packages of the libraries the project builds against (headers and the shared
# libraries they bring), in one list: sourced by scripts/install-deps.sh (this machine) and
# scripts/cross-aarch64.sh (an arm64 sysroot), so the two cannot drift apart.
# shellcheck disable=SC2034  # used by the scripts that source this one
library_packages=(
  libtorch-dev libopenblas0-openmp
  libsentencepiece-dev
  libcli11-dev nlohmann-json3-dev catch2
  libgoogle-perftools-dev
  libgloo-dev
  libdnnl-dev  # oneDNN's C header: the types of the GEMMs called directly (LibTorch loads the library)
  zlib1g-dev  # CRC-32 of checkpoints
  libyaml-cpp-dev libzip-dev  # Marian's model.yml and .npz (nmt-export --format marian, nmt-import)
  libboost-dev  # nmt-serve's HTTP: Boost.Beast and Boost.Asio (header-only)
)
