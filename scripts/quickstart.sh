#!/usr/bin/env bash
# Installs, builds, generates the bundled number-words task, trains its tokenizer and a
# small attention model, translates and scores the test set, and writes an attention heatmap.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
build/bin/nmt-make-numbers --output-dir data/numbers --seed 1
mkdir -p work/numbers
build/bin/nmt-spm-train --input data/numbers/train.en data/numbers/train.de \
  --model-prefix work/numbers/spm --vocab-size 120 --model-type bpe

build/bin/nmt-train --config configs/numbers-attention.json \
  --train-src data/numbers/train.en --train-tgt data/numbers/train.de \
  --valid-src data/numbers/valid.en --valid-tgt data/numbers/valid.de \
  --src-spm work/numbers/spm.model --tgt-spm work/numbers/spm.model --model-dir work/numbers/attention
head -5 data/numbers/test.en | build/bin/nmt-translate --model work/numbers/attention/best.pt --beam 5
build/bin/nmt-translate --model work/numbers/attention/best.pt --quiet < data/numbers/test.en \
  | build/bin/nmt-eval --ref data/numbers/test.de --metrics chrf
head -4 data/numbers/test.en | build/bin/nmt-align --model work/numbers/attention/best.pt \
  --html work/numbers/heatmap.html --output work/numbers/attention.jsonl
echo "quick start done: model work/numbers/attention/best.pt, heatmap work/numbers/heatmap.html" >&2
