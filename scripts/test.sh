#!/usr/bin/env bash
# Installs dependencies, builds once, runs all tests (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
# One test more than cores: several tests spend part of their time waiting (timeouts of the
# distributed and server tests, processes starting), and a third test fills that time
# (bench/RESULTS.md: 251 s against 303 s on 2 cores on a built tree; from a clean clone,
# where the fuzz harnesses compile inside the suite, no gain shown). The suite passes under
# heavier load.
cd build && ctest --output-on-failure -j"$(( $(nproc) + 1 ))"
