#!/usr/bin/env bash
# Installs, builds, generates the bundled number-words task and trains its tokenizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
build/bin/nmt-make-numbers --output-dir data/numbers --seed 1
mkdir -p work/numbers
build/bin/nmt-spm-train --input data/numbers/train.en data/numbers/train.de \
  --model-prefix work/numbers/spm --vocab-size 64 --model-type unigram
echo "quick start done: tokenizer in work/numbers/spm.model" >&2
